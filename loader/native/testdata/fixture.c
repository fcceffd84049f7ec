/*
 * fixture.c — a configurable native plugin for the loader's tests. Each
 * -D switch below makes it misbehave in one way (INFO_CRASH, INFO_HANG and
 * INFO_PRINT in get_info, for the scanner); without any it is a
 * well-formed plugin providing dynop.test.Fixture.
 */
#if defined(INFO_HANG)
#define _POSIX_C_SOURCE 200809L
#include <unistd.h>
#endif
#if defined(INFO_PRINT)
#include <stdio.h>
#endif
#include <string.h>

#include <dynop/dynop.h>

#ifndef FIXTURE_ID
#define FIXTURE_ID "dynop.plugin.fixture"
#endif
#ifndef FIXTURE_IFACE_NAME
#define FIXTURE_IFACE_NAME "dynop.test.Fixture"
#endif
#ifndef FIXTURE_IFACE_UID /* 0xF1 or another last byte for a different UID */
#define FIXTURE_IFACE_UID 0xF1
#endif
#define UID DYNOP_UID(0x7E57F1C5, 0x0000, 0x4000, 0x80, 0x00, 0, 0, 0, 0, 0, FIXTURE_IFACE_UID)

#ifndef INFO_MAJOR
#define INFO_MAJOR DYNOP_PLUGIN_INFO_VERSION_MAJOR
#endif
#ifndef INFO_MINOR
#define INFO_MINOR 0
#endif
#ifndef INFO_SIZE
#define INFO_SIZE sizeof(dynop_plugin_info)
#endif
#ifndef API_MAJOR
#define API_MAJOR DYNOP_API_VERSION_MAJOR
#endif
#ifndef API_MINOR
#define API_MINOR DYNOP_API_VERSION_MINOR
#endif
#ifndef IFACE_COUNT
#define IFACE_COUNT 1
#endif
#ifndef TABLE_SIZE
#define TABLE_SIZE sizeof(fixture_iface)
#endif

typedef struct fixture_iface {
    dynop_header header;
    int (*ping)(void);
} fixture_iface;

#ifdef UNRESOLVED
int dynop_fixture_missing_function(void); /* defined nowhere */
static int ping(void) { return dynop_fixture_missing_function(); }
#else
static int ping(void) { return 42; }
#endif

static const fixture_iface table = {
    {UID, DYNOP_V(1, 0, 0), (uint32_t)(TABLE_SIZE)}, ping,
};

static const dynop_interface_desc desc = DYNOP_INTERFACE_DESC(UID, DYNOP_V(1, 0, 0), FIXTURE_IFACE_NAME);
static const dynop_interface_desc *const provides[] = {&desc};

static const dynop_plugin_info info = {
#ifdef INFO_WRONG_TYPE
    {DYNOP_HOST_TYPE, DYNOP_V(INFO_MAJOR, INFO_MINOR, 0), (uint32_t)(INFO_SIZE)},
#else
    {DYNOP_PLUGIN_INFO_TYPE, DYNOP_V(INFO_MAJOR, INFO_MINOR, 0), (uint32_t)(INFO_SIZE)},
#endif
    DYNOP_V(API_MAJOR, API_MINOR, 0),
    FIXTURE_ID,
    DYNOP_V(1, 0, 0),
    "Test fixture.",
    NULL,
    NULL,
#ifdef GLOBAL
    DYNOP_PLUGIN_GLOBAL_SYMBOLS,
#else
    0,
#endif
    IFACE_COUNT, provides,
    0, NULL,
    NULL,
    0, NULL,
    0, NULL,
};

/* A symbol with default visibility, to see whether the library's symbols
 * reach the global scope (RTLD_GLOBAL). */
#ifndef MARKER
#define MARKER dynop_fixture_marker_symbol
#endif
DYNOP_EXPORT int MARKER(void);
DYNOP_EXPORT int MARKER(void) { return 1; }

static const dynop_plugin_info *get_info(void) {
#if defined(INFO_CRASH) /* a plugin that crashes while reporting its info */
    *(volatile int *)(uintptr_t)0 = 1;
#elif defined(INFO_HANG) /* one that never answers */
    for (;;) pause();
#elif defined(INFO_PRINT) /* one that chatters on stdout */
    puts("{\"schema\": \"not what the host asked for\"}");
    fflush(stdout);
#endif
#ifdef INFO_NULL
    return NULL;
#else
    return &info;
#endif
}

static dynop_result register_plugin(const dynop_host *host) {
#ifdef ACQUIRE_FROM
    {
        const void *other = NULL;
        dynop_ref ref = 0;
        const dynop_uid uid = UID;
        const dynop_version v = DYNOP_V(1, 0, 0);
        dynop_result rc = host->acquire(host, ACQUIRE_FROM, &uid, v, &other, &ref);
        if (rc != DYNOP_OK) {
            host->set_error(host, host->last_error(host));
            return rc;
        }
        if (host->last_error(host)[0] != 0) { /* a success leaves no error behind */
            host->set_error(host, host->last_error(host));
            return DYNOP_ERROR_STATE;
        }
#ifdef RELEASE_TWICE
        rc = host->release(host, ref);
        if (rc == DYNOP_OK) rc = host->release(host, ref);
        if (rc != DYNOP_OK) {
            host->set_error(host, host->last_error(host));
            return rc;
        }
#endif
    }
#endif

#ifdef REGISTER_FAILS
    host->set_error(host, "fixture refuses to start: no frobnicator on this machine");
    return DYNOP_ERROR_UNSUPPORTED;
#else
    {
        dynop_result rc = host->add_interface(host, &table);
        if (rc != DYNOP_OK) {
            host->set_error(host, host->last_error(host));
            return rc;
        }
        host->log(host, DYNOP_LOG_INFO, "fixture: registered");
#ifdef FAIL_LAST /* end with a failed host call, and succeed all the same */
        {
            const dynop_uid nothing = DYNOP_UID(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1);
            if (host->remove_interface(host, &nothing) == DYNOP_OK) return DYNOP_ERROR;
        }
#endif
        return DYNOP_OK;
    }
#endif
}

#ifdef NO_ENTRY
dynop_function other_name(const char *name);
dynop_function other_name(const char *name)
#else
DYNOP_EXPORT dynop_function dynop_plugin_get_function(const char *name)
#endif
{
#ifndef NO_GET_INFO
    if (strcmp(name, "get_info") == 0) return (dynop_function)get_info;
#endif
#ifndef NO_REGISTER
    if (strcmp(name, "register") == 0) return (dynop_function)register_plugin;
#endif
    return NULL;
}
