// A narrow C face for libcurl (Debian: libcurl4-openssl-dev): curl_easy_setopt is variadic
// and cannot be called from Swift, so the one request beacond makes is written here.
#include <stddef.h>

typedef struct beacond_http_client beacond_http_client;

typedef struct {
    long status;         // HTTP status, 0 when no response arrived
    char error[256];     // curl's message when status is 0
} beacond_http_result;

/// Why libcurl cannot be used (it could not be loaded), or NULL. Loads it on first use.
const char *beacond_http_unavailable_reason(void);

/// A client with its own connection cache (keep-alive to the webhook's host); NULL when
/// libcurl is unavailable.
beacond_http_client *beacond_http_client_new(void);
void beacond_http_client_free(beacond_http_client *client);

/// Any request of this client still running at `deadline_ms` (CLOCK_MONOTONIC, ms) is
/// aborted; 0 means none. Safe to call from another thread (a stopping daemon).
void beacond_http_client_set_deadline(beacond_http_client *client, long long deadline_ms);

/// POSTs `body` to `url` with the given "Name: value" headers; waits at most `timeout_ms`.
/// Returns 0 when a response arrived (any status), -1 otherwise (see result->error).
int beacond_http_post(beacond_http_client *client, const char *url, const char *body, size_t length,
                      const char *const *headers, int header_count, long timeout_ms,
                      beacond_http_result *result);
