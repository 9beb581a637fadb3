#define _GNU_SOURCE
#include <sched.h>
#include <sys/socket.h>
#include <sys/ioctl.h>
#include <linux/fs.h>
#include "clinux.h"

int clinux_accept_nonblocking(int listener) {
    return accept4(listener, 0, 0, SOCK_NONBLOCK | SOCK_CLOEXEC);
}

int clinux_peer_credentials(int fd, pid_t *pid, uid_t *uid, gid_t *gid) {
    struct ucred cred;
    socklen_t length = sizeof cred;
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &length) != 0) return -1;
    *pid = cred.pid;
    *uid = cred.uid;
    *gid = cred.gid;
    return 0;
}

int clinux_set_no_copy_on_write(int fd) {
    int flags = 0;
    if (ioctl(fd, FS_IOC_GETFLAGS, &flags) != 0) return -1;
    if (flags & FS_NOCOW_FL) return 0;
    flags |= FS_NOCOW_FL;
    return ioctl(fd, FS_IOC_SETFLAGS, &flags);
}

#include <pthread.h>

int clinux_set_thread_name(const char *name) {
    return pthread_setname_np(pthread_self(), name);
}

int clinux_available_cpus(void) {
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) != 0) return 1;
    int n = CPU_COUNT(&set);
    return n > 0 ? n : 1;
}
