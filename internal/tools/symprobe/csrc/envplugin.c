/* Reads environ directly: 32 if the host's setenv of SYMPROBE_X is seen. */
#include <string.h>
extern char **environ;
float plugin_run(void) {
    for (char **e = environ; *e; e++)
        if (strncmp(*e, "SYMPROBE_X=", 11) == 0) return 32;
    return 42;
}
