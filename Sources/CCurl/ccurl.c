#include "ccurl.h"
#include <curl/curl.h>
#include "cloader.h"
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct beacond_http_client {
    CURL *easy;
    long long deadline_ms;  // read and written with __atomic builtins
};

static long long monotonic_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void beacond_http_client_set_deadline(beacond_http_client *client, long long deadline_ms) {
    __atomic_store_n(&client->deadline_ms, deadline_ms, __ATOMIC_RELAXED);
}

// Called by libcurl about once a second and on progress: a nonzero return aborts the request.
static int past_deadline(void *user, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal, curl_off_t ulnow) {
    (void)dltotal; (void)dlnow; (void)ultotal; (void)ulnow;
    beacond_http_client *client = user;
    long long deadline = __atomic_load_n(&client->deadline_ms, __ATOMIC_RELAXED);
    return deadline != 0 && monotonic_ms() >= deadline;
}

// libcurl is loaded the first time a webhook needs it, not at start-up: with its TLS, LDAP
// and Kerberos libraries it is about 5 MB of resident memory that a gateway publishing only
// through the API never uses. These are the calls made, resolved by name from libcurl.so.4.
static struct {
    CURLcode (*global_init)(long);
    CURL *(*easy_init)(void);
    void (*easy_cleanup)(CURL *);
    void (*easy_reset)(CURL *);
    CURLcode (*easy_setopt)(CURL *, CURLoption, ...);
    CURLcode (*easy_perform)(CURL *);
    CURLcode (*easy_getinfo)(CURL *, CURLINFO, ...);
    const char *(*easy_strerror)(CURLcode);
    struct curl_slist *(*slist_append)(struct curl_slist *, const char *);
    void (*slist_free_all)(struct curl_slist *);
} curl;
static char load_error[256];

#define SYMBOL(field, name) {name, (void **)&curl.field}
static const beacond_symbol symbols[] = {
    SYMBOL(global_init, "curl_global_init"),
    SYMBOL(easy_init, "curl_easy_init"),
    SYMBOL(easy_cleanup, "curl_easy_cleanup"),
    SYMBOL(easy_reset, "curl_easy_reset"),
    SYMBOL(easy_setopt, "curl_easy_setopt"),
    SYMBOL(easy_perform, "curl_easy_perform"),
    SYMBOL(easy_getinfo, "curl_easy_getinfo"),
    SYMBOL(easy_strerror, "curl_easy_strerror"),
    SYMBOL(slist_append, "curl_slist_append"),
    SYMBOL(slist_free_all, "curl_slist_free_all"),
};

static pthread_once_t global_once = PTHREAD_ONCE_INIT;
static int loaded;
static void global_init(void) {
    if (!beacond_load_library("libcurl.so.4", symbols, sizeof symbols / sizeof *symbols, load_error,
                              sizeof load_error))
        return;
    curl.global_init(CURL_GLOBAL_DEFAULT);
    loaded = 1;
}

const char *beacond_http_unavailable_reason(void) {
    pthread_once(&global_once, global_init);
    return loaded ? NULL : load_error;
}

// The receiver's body is not needed; it is read and dropped.
static size_t discard(char *data, size_t size, size_t count, void *user) {
    (void)data;
    (void)user;
    return size * count;
}

beacond_http_client *beacond_http_client_new(void) {
    if (beacond_http_unavailable_reason()) return NULL;
    beacond_http_client *client = calloc(1, sizeof *client);
    if (!client) return NULL;
    client->easy = curl.easy_init();
    if (!client->easy) {
        free(client);
        return NULL;
    }
    return client;
}

void beacond_http_client_free(beacond_http_client *client) {
    if (!client) return;
    curl.easy_cleanup(client->easy);
    free(client);
}

int beacond_http_post(beacond_http_client *client, const char *url, const char *body, size_t length,
                      const char *const *headers, int header_count, long timeout_ms,
                      beacond_http_result *result) {
    CURL *easy = client->easy;
    struct curl_slist *list = NULL;
    for (int i = 0; i < header_count; i++) list = curl.slist_append(list, headers[i]);
    // No "Expect: 100-continue" round trip: webhook bodies are small.
    list = curl.slist_append(list, "Expect:");
    result->status = 0;
    result->error[0] = 0;
    curl.easy_reset(easy);
    curl.easy_setopt(easy, CURLOPT_URL, url);
    curl.easy_setopt(easy, CURLOPT_POST, 1L);
    curl.easy_setopt(easy, CURLOPT_POSTFIELDS, body);
    curl.easy_setopt(easy, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)length);
    curl.easy_setopt(easy, CURLOPT_HTTPHEADER, list);
    curl.easy_setopt(easy, CURLOPT_TIMEOUT_MS, timeout_ms);
    curl.easy_setopt(easy, CURLOPT_CONNECTTIMEOUT_MS, timeout_ms);
    curl.easy_setopt(easy, CURLOPT_NOSIGNAL, 1L);
    curl.easy_setopt(easy, CURLOPT_WRITEFUNCTION, discard);
    curl.easy_setopt(easy, CURLOPT_ERRORBUFFER, result->error);
    curl.easy_setopt(easy, CURLOPT_PROTOCOLS_STR, "http,https");
    curl.easy_setopt(easy, CURLOPT_FOLLOWLOCATION, 0L);
    curl.easy_setopt(easy, CURLOPT_NOPROGRESS, 0L);
    curl.easy_setopt(easy, CURLOPT_XFERINFOFUNCTION, past_deadline);
    curl.easy_setopt(easy, CURLOPT_XFERINFODATA, client);
    CURLcode code = curl.easy_perform(easy);
    curl.slist_free_all(list);
    curl.easy_setopt(easy, CURLOPT_ERRORBUFFER, NULL);
    if (code != CURLE_OK) {
        if (!result->error[0]) strncpy(result->error, curl.easy_strerror(code), sizeof result->error - 1);
        return -1;
    }
    curl.easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &result->status);
    return 0;
}
