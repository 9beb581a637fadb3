#include "cmosquitto.h"
#include "cloader.h"
#include <pthread.h>
#include <stdio.h>

// Each call resolved by name from libmosquitto.so.1 the first time the library is needed.
static struct {
    __typeof__(&mosquitto_new) new;
    __typeof__(&mosquitto_destroy) destroy;
    __typeof__(&mosquitto_user_data_set) user_data_set;
    __typeof__(&mosquitto_int_option) int_option;
    __typeof__(&mosquitto_threaded_set) threaded_set;
    __typeof__(&mosquitto_will_set_v5) will_set_v5;
    __typeof__(&mosquitto_username_pw_set) username_pw_set;
    __typeof__(&mosquitto_tls_set) tls_set;
    __typeof__(&mosquitto_tls_opts_set) tls_opts_set;
    __typeof__(&mosquitto_connect_v5_callback_set) connect_v5_callback_set;
    __typeof__(&mosquitto_message_v5_callback_set) message_v5_callback_set;
    __typeof__(&mosquitto_publish_v5_callback_set) publish_v5_callback_set;
    __typeof__(&mosquitto_connect_bind_v5) connect_bind_v5;
    __typeof__(&mosquitto_disconnect) disconnect;
    __typeof__(&mosquitto_loop) loop;
    __typeof__(&mosquitto_subscribe_v5) subscribe_v5;
    __typeof__(&mosquitto_publish_v5) publish_v5;
    __typeof__(&mosquitto_property_add_int32) property_add_int32;
    __typeof__(&mosquitto_property_free_all) property_free_all;
    __typeof__(&mosquitto_strerror) strerror;
    __typeof__(&mosquitto_reason_string) reason_string;
    __typeof__(&mosquitto_lib_init) lib_init;
} lib;
static char load_error[256];

#define SYMBOL(name) {"mosquitto_" #name, (void **)&lib.name}
static const beacond_symbol symbols[] = {
    SYMBOL(new),
    SYMBOL(destroy),
    SYMBOL(user_data_set),
    SYMBOL(int_option),
    SYMBOL(threaded_set),
    SYMBOL(will_set_v5),
    SYMBOL(username_pw_set),
    SYMBOL(tls_set),
    SYMBOL(tls_opts_set),
    SYMBOL(connect_v5_callback_set),
    SYMBOL(message_v5_callback_set),
    SYMBOL(publish_v5_callback_set),
    SYMBOL(connect_bind_v5),
    SYMBOL(disconnect),
    SYMBOL(loop),
    SYMBOL(subscribe_v5),
    SYMBOL(publish_v5),
    SYMBOL(property_add_int32),
    SYMBOL(property_free_all),
    SYMBOL(strerror),
    SYMBOL(reason_string),
    {"mosquitto_lib_init", (void **)&lib.lib_init},
};
static pthread_once_t once = PTHREAD_ONCE_INIT;
static int loaded;

static void load(void) {
    void *library = beacond_load_library("libmosquitto.so.1", symbols, sizeof symbols / sizeof *symbols, load_error,
                                         sizeof load_error);
    if (!library) return;
    if (lib.lib_init() != MOSQ_ERR_SUCCESS) {
        snprintf(load_error, sizeof load_error, "mosquitto_lib_init failed");
        return;
    }
    loaded = 1;
}

const char *beacond_mosquitto_unavailable_reason(void) {
    pthread_once(&once, load);
    return loaded ? NULL : load_error;
}

struct mosquitto *beacond_mosquitto_new(const char *id, bool clean_session, void *obj) {
    if (beacond_mosquitto_unavailable_reason()) return NULL;
    return lib.new(id, clean_session, obj);
}

void beacond_mosquitto_destroy(struct mosquitto *mosq) {
    if (beacond_mosquitto_unavailable_reason()) return;
    lib.destroy(mosq);
}

void beacond_mosquitto_user_data_set(struct mosquitto *mosq, void *obj) {
    if (beacond_mosquitto_unavailable_reason()) return;
    lib.user_data_set(mosq, obj);
}

int beacond_mosquitto_int_option(struct mosquitto *mosq, enum mosq_opt_t option, int value) {
    if (beacond_mosquitto_unavailable_reason()) return MOSQ_ERR_NOT_SUPPORTED;
    return lib.int_option(mosq, option, value);
}

int beacond_mosquitto_threaded_set(struct mosquitto *mosq, bool threaded) {
    if (beacond_mosquitto_unavailable_reason()) return MOSQ_ERR_NOT_SUPPORTED;
    return lib.threaded_set(mosq, threaded);
}

int beacond_mosquitto_will_set_v5(struct mosquitto *mosq, const char *topic, int payloadlen, const void *payload,                                   int qos, bool retain, mosquitto_property *properties) {
    if (beacond_mosquitto_unavailable_reason()) return MOSQ_ERR_NOT_SUPPORTED;
    return lib.will_set_v5(mosq, topic, payloadlen, payload, qos, retain, properties);
}

int beacond_mosquitto_username_pw_set(struct mosquitto *mosq, const char *username, const char *password) {
    if (beacond_mosquitto_unavailable_reason()) return MOSQ_ERR_NOT_SUPPORTED;
    return lib.username_pw_set(mosq, username, password);
}

int beacond_mosquitto_tls_set(struct mosquitto *mosq, const char *cafile, const char *capath, const char *certfile,                               const char *keyfile, int (*pw_callback)(char *buf, int size, int rwflag, void *userdata)) {
    if (beacond_mosquitto_unavailable_reason()) return MOSQ_ERR_NOT_SUPPORTED;
    return lib.tls_set(mosq, cafile, capath, certfile, keyfile, pw_callback);
}

int beacond_mosquitto_tls_opts_set(struct mosquitto *mosq, int cert_reqs, const char *tls_version, const char *ciphers) {
    if (beacond_mosquitto_unavailable_reason()) return MOSQ_ERR_NOT_SUPPORTED;
    return lib.tls_opts_set(mosq, cert_reqs, tls_version, ciphers);
}

void beacond_mosquitto_connect_v5_callback_set(     struct mosquitto *mosq, void (*on_connect)(struct mosquitto *, void *, int, int, const mosquitto_property *)) {
    if (beacond_mosquitto_unavailable_reason()) return;
    lib.connect_v5_callback_set(mosq, on_connect);
}

void beacond_mosquitto_message_v5_callback_set(     struct mosquitto *mosq,     void (*on_message)(struct mosquitto *, void *, const struct mosquitto_message *, const mosquitto_property *)) {
    if (beacond_mosquitto_unavailable_reason()) return;
    lib.message_v5_callback_set(mosq, on_message);
}

void beacond_mosquitto_publish_v5_callback_set(     struct mosquitto *mosq, void (*on_publish)(struct mosquitto *, void *, int, int, const mosquitto_property *)) {
    if (beacond_mosquitto_unavailable_reason()) return;
    lib.publish_v5_callback_set(mosq, on_publish);
}

int beacond_mosquitto_connect_bind_v5(struct mosquitto *mosq, const char *host, int port, int keepalive,                                       const char *bind_address, const mosquitto_property *properties) {
    if (beacond_mosquitto_unavailable_reason()) return MOSQ_ERR_NOT_SUPPORTED;
    return lib.connect_bind_v5(mosq, host, port, keepalive, bind_address, properties);
}

int beacond_mosquitto_disconnect(struct mosquitto *mosq) {
    if (beacond_mosquitto_unavailable_reason()) return MOSQ_ERR_NOT_SUPPORTED;
    return lib.disconnect(mosq);
}

int beacond_mosquitto_loop(struct mosquitto *mosq, int timeout, int max_packets) {
    if (beacond_mosquitto_unavailable_reason()) return MOSQ_ERR_NOT_SUPPORTED;
    return lib.loop(mosq, timeout, max_packets);
}

int beacond_mosquitto_subscribe_v5(struct mosquitto *mosq, int *mid, const char *sub, int qos, int options,                                    const mosquitto_property *properties) {
    if (beacond_mosquitto_unavailable_reason()) return MOSQ_ERR_NOT_SUPPORTED;
    return lib.subscribe_v5(mosq, mid, sub, qos, options, properties);
}

int beacond_mosquitto_publish_v5(struct mosquitto *mosq, int *mid, const char *topic, int payloadlen,                                  const void *payload, int qos, bool retain, const mosquitto_property *properties) {
    if (beacond_mosquitto_unavailable_reason()) return MOSQ_ERR_NOT_SUPPORTED;
    return lib.publish_v5(mosq, mid, topic, payloadlen, payload, qos, retain, properties);
}

int beacond_mosquitto_property_add_int32(mosquitto_property **proplist, int identifier, uint32_t value) {
    if (beacond_mosquitto_unavailable_reason()) return MOSQ_ERR_NOT_SUPPORTED;
    return lib.property_add_int32(proplist, identifier, value);
}

void beacond_mosquitto_property_free_all(mosquitto_property **properties) {
    if (beacond_mosquitto_unavailable_reason()) return;
    lib.property_free_all(properties);
}

const char *beacond_mosquitto_strerror(int mosq_errno) {
    if (beacond_mosquitto_unavailable_reason()) return load_error;
    return lib.strerror(mosq_errno);
}

const char *beacond_mosquitto_reason_string(int reason_code) {
    if (beacond_mosquitto_unavailable_reason()) return load_error;
    return lib.reason_string(reason_code);
}
