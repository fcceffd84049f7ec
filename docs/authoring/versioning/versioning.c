/*
 * versioning.c — the native plugin acme.plugin.greeting, release 2.1.0,
 * which provides the interface acme.example.Greeting at version 1.1.
 *
 * Three versions, three rules:
 *   - plugin_version is the plugin's own: bump it with every release;
 *   - api_version is the dynop.h the plugin was built against: it changes
 *     when you rebuild against a newer dynop.h, never by hand;
 *   - an interface's version is its struct's: appending a member bumps the
 *     minor version, any other change makes a new major version.
 */
#include <string.h>

#include <dynop/dynop.h>

/* The interface, as its header would declare it for callers. */
#define GREETING_UID                                                          \
    DYNOP_UID(0x982F9967, 0x62F5, 0x4705, 0x9D, 0x28, 0xE6, 0x20, 0x6F, 0x99, 0x2F, 0xC5)
#define GREETING_VERSION DYNOP_V(1, 1, 0)
typedef struct acme_greeting {
    dynop_header header;          /* GREETING_UID, GREETING_VERSION */
    const char *(*hello)(void);   /* since 1.0 */
    const char *(*goodbye)(void); /* since 1.1: appended, so 1.0 callers still work */
} acme_greeting;

static const char *hello(void) { return "hello"; }
static const char *goodbye(void) { return "goodbye"; }

static const acme_greeting greeting = {
    DYNOP_HEADER(GREETING_UID, GREETING_VERSION, acme_greeting), hello, goodbye,
};
static const dynop_interface_desc greeting_desc =
    DYNOP_INTERFACE_DESC(GREETING_UID, GREETING_VERSION, "acme.example.Greeting");
static const dynop_interface_desc *const provides[] = {&greeting_desc};
static const dynop_plugin_info info = {
    .header = DYNOP_PLUGIN_INFO_HEADER,
    .api_version = DYNOP_API_VERSION,   /* 0.1.0, from dynop.h */
    .id = "acme.plugin.greeting",
    .plugin_version = DYNOP_V(2, 1, 0), /* this release */
    .interface_count = 1, .interfaces = provides,
};

static const dynop_plugin_info *get_info(void) { return &info; }
static dynop_result register_plugin(const dynop_host *host) { return host->add_interface(host, &greeting); }

DYNOP_EXPORT dynop_function dynop_plugin_get_function(const char *name) {
    if (strcmp(name, "get_info") == 0) return (dynop_function)get_info;
    if (strcmp(name, "register") == 0) return (dynop_function)register_plugin;
    return NULL;
}
