// libmosquitto (Debian: libmosquitto1; libmosquitto-dev to build) behind the calls beacond
// makes, loaded with dlopen at first use as libcurl and libcrypto are: a gateway that is not
// in a site never maps it, nor the OpenSSL it links (about 1.8 MB resident, BENCHMARKS.md).
// The types and constants are mosquitto.h's; each beacond_mosquitto_X is mosquitto_X.
#ifndef BEACOND_CMOSQUITTO_H
#define BEACOND_CMOSQUITTO_H

#include <mosquitto.h>
#include <mqtt_protocol.h>

/// Why libmosquitto cannot be used (it could not be loaded), or NULL. Loads it (and calls
/// mosquitto_lib_init) on first use.
const char *beacond_mosquitto_unavailable_reason(void);

struct mosquitto *beacond_mosquitto_new(const char *id, bool clean_session, void *obj);
void beacond_mosquitto_destroy(struct mosquitto *mosq);
void beacond_mosquitto_user_data_set(struct mosquitto *mosq, void *obj);
int beacond_mosquitto_int_option(struct mosquitto *mosq, enum mosq_opt_t option, int value);
int beacond_mosquitto_threaded_set(struct mosquitto *mosq, bool threaded);
int beacond_mosquitto_will_set_v5(struct mosquitto *mosq, const char *topic, int payloadlen, const void *payload,
                                  int qos, bool retain, mosquitto_property *properties);
int beacond_mosquitto_username_pw_set(struct mosquitto *mosq, const char *username, const char *password);
int beacond_mosquitto_tls_set(struct mosquitto *mosq, const char *cafile, const char *capath, const char *certfile,
                              const char *keyfile, int (*pw_callback)(char *buf, int size, int rwflag, void *userdata));
int beacond_mosquitto_tls_opts_set(struct mosquitto *mosq, int cert_reqs, const char *tls_version, const char *ciphers);
void beacond_mosquitto_connect_v5_callback_set(
    struct mosquitto *mosq, void (*on_connect)(struct mosquitto *, void *, int, int, const mosquitto_property *));
void beacond_mosquitto_message_v5_callback_set(
    struct mosquitto *mosq,
    void (*on_message)(struct mosquitto *, void *, const struct mosquitto_message *, const mosquitto_property *));
void beacond_mosquitto_publish_v5_callback_set(
    struct mosquitto *mosq, void (*on_publish)(struct mosquitto *, void *, int, int, const mosquitto_property *));
int beacond_mosquitto_connect_bind_v5(struct mosquitto *mosq, const char *host, int port, int keepalive,
                                      const char *bind_address, const mosquitto_property *properties);
int beacond_mosquitto_disconnect(struct mosquitto *mosq);
int beacond_mosquitto_loop(struct mosquitto *mosq, int timeout, int max_packets);
int beacond_mosquitto_subscribe_v5(struct mosquitto *mosq, int *mid, const char *sub, int qos, int options,
                                   const mosquitto_property *properties);
int beacond_mosquitto_publish_v5(struct mosquitto *mosq, int *mid, const char *topic, int payloadlen,
                                 const void *payload, int qos, bool retain, const mosquitto_property *properties);
int beacond_mosquitto_property_add_int32(mosquitto_property **proplist, int identifier, uint32_t value);
void beacond_mosquitto_property_free_all(mosquitto_property **properties);
const char *beacond_mosquitto_strerror(int mosq_errno);
const char *beacond_mosquitto_reason_string(int reason_code);

#endif
