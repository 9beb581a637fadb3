// Linux interfaces that Glibc's Swift module does not export: epoll, eventfd, the
// _GNU_SOURCE socket calls and the inode-flag ioctls (wrapped in clinux.c, which is compiled
// with _GNU_SOURCE).
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/types.h>

/// accept4 with SOCK_NONBLOCK | SOCK_CLOEXEC.
int clinux_accept_nonblocking(int listener);

/// SO_PEERCRED of a connected Unix socket; 0 on success, -1 with errno otherwise.
int clinux_peer_credentials(int fd, pid_t *pid, uid_t *uid, gid_t *gid);

/// Names the calling thread (at most 15 bytes; longer is refused): what top -H and /proc show.
int clinux_set_thread_name(const char *name);

/// Asks a copy-on-write filesystem (btrfs) to overwrite the file's blocks in place, as other
/// filesystems do; it takes only while the file is empty. 0 on success, -1 with errno
/// otherwise (ENOTTY, EOPNOTSUPP or EINVAL where the filesystem has no such flag: nothing to do).
int clinux_set_no_copy_on_write(int fd);

/// How many CPUs the calling thread may run on (sched_getaffinity: a container's or systemd's
/// CPUAffinity= limit, not the machine's count); 1 when it cannot be read.
int clinux_available_cpus(void);
