/* The kernel's floor for a reflector's turnaround on this host: a bare UDP
 * echo loop that does nothing but receive and send back, with the same
 * kernel software stamps misura reflect uses (RX stamp of the request, TX
 * stamp of the reply from the error queue). It prints the p50 and minimum
 * of (TX stamp - RX stamp) over the requests it answered. No STAMP, no
 * checks, no clock reads: whatever misura reflect adds is above this.
 *
 *   echo_floor ADDR PORT COUNT [spin]
 *
 * Used by scripts/floor.sh; not part of misura. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <linux/errqueue.h>
#include <linux/net_tstamp.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

static long long stamp_of(struct msghdr *m) {
    for (struct cmsghdr *c = CMSG_FIRSTHDR(m); c; c = CMSG_NXTHDR(m, c))
        if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SO_TIMESTAMPING) {
            struct timespec *ts = (struct timespec *)CMSG_DATA(c);
            return ts[0].tv_sec * 1000000000LL + ts[0].tv_nsec;
        }
    return -1;
}

static int cmp(const void *a, const void *b) {
    long long x = *(const long long *)a, y = *(const long long *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv) {
    if (argc < 4) { fprintf(stderr, "usage: echo_floor ADDR PORT COUNT [spin]\n"); return 2; }
    int n = atoi(argv[3]), spin = argc > 4;
    if (n < 1 || n > 1000000) { fprintf(stderr, "COUNT must be 1..1000000\n"); return 2; }
    int s = socket(AF_INET, SOCK_DGRAM | (spin ? SOCK_NONBLOCK : 0), 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(atoi(argv[2]))};
    inet_pton(AF_INET, argv[1], &a.sin_addr);
    if (bind(s, (struct sockaddr *)&a, sizeof a)) { perror("bind"); return 1; }
    int f = SOF_TIMESTAMPING_TX_SOFTWARE | SOF_TIMESTAMPING_RX_SOFTWARE | SOF_TIMESTAMPING_SOFTWARE |
            SOF_TIMESTAMPING_OPT_ID | SOF_TIMESTAMPING_OPT_TSONLY;
    setsockopt(s, SOL_SOCKET, SO_TIMESTAMPING, &f, sizeof f);
    long long *turn = calloc(n, sizeof *turn);
    char buf[2048], ctl[512];
    int got = 0;
    while (got < n) {
        struct sockaddr_in src; struct iovec iov = {buf, sizeof buf};
        struct msghdr m = {.msg_name = &src, .msg_namelen = sizeof src, .msg_iov = &iov, .msg_iovlen = 1,
                           .msg_control = ctl, .msg_controllen = sizeof ctl};
        ssize_t len = recvmsg(s, &m, 0);
        if (len < 0) { if (errno == EAGAIN || errno == EINTR) continue; perror("recvmsg"); return 1; }
        long long rx = stamp_of(&m);
        sendto(s, buf, len, 0, (struct sockaddr *)&src, sizeof src);
        struct msghdr e = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl, .msg_controllen = sizeof ctl};
        long long tx = -1;
        for (int k = 0; k < 1000 && tx < 0; k++) {
            e.msg_controllen = sizeof ctl;
            if (recvmsg(s, &e, MSG_ERRQUEUE | MSG_DONTWAIT) >= 0) tx = stamp_of(&e);
        }
        if (rx > 0 && tx > 0) turn[got++] = tx - rx;
    }
    qsort(turn, got, sizeof *turn, cmp);
    printf("bare echo turnaround over %d requests: p50 %.2f us, min %.2f us, p90 %.2f us\n", got,
           turn[got / 2] / 1e3, turn[0] / 1e3, turn[got * 9 / 10] / 1e3);
    return 0;
}
