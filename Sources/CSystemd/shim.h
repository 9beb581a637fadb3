// libsystemd (Debian: libsystemd-dev): readiness, watchdog and journal. Only the
// non-variadic calls are used from Swift (sd_notify, sd_watchdog_enabled, sd_journal_sendv).
#include <systemd/sd-daemon.h>
#include <systemd/sd-journal.h>
#include <sys/uio.h>
