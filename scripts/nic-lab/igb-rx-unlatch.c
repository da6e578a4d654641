/*
 * igb-rx-unlatch: a workaround for an emulator bug, run inside the NIC lab's
 * guest only (scripts/nic-lab.sh --nic igb); never part of misura.
 *
 * QEMU's igb (10.0, hw/net/igb_core.c) latches a received PTP frame's time in
 * RXSTMPL/H and sets TSYNCRXCTL.VALID; while VALID is set it stamps no other
 * frame, and it clears VALID only when RXSATRH is read (igb_get_rxsatrh).
 * Linux's igb driver reads RXSTMPL/H but never RXSATRH (igb_ptp.c), so on
 * QEMU only the first PTP frame after a reset is stamped; real 82576 silicon
 * clears VALID on the RXSTMPH read. This program plays the missing read on
 * each igb port given (its BAR0, /sys/bus/pci/devices/BDF/resource0; the
 * guest boots with iomem=relaxed so the driver's BAR can be mapped).
 *
 * A port given as PATH@IFNAME is released by the frames themselves: a packet
 * socket on IFNAME receives every PTP frame (EtherType 0x88F7) after the
 * driver has handled it, with the hardware stamp the driver read, if any. A
 * stamped frame means its latch has been read, and as the NIC latches no
 * other frame until released, the latch still set is that frame's: RXSATRH
 * is read at once. So no stamp is lost or moved to another frame; frames
 * that arrive while a latch waits for its reader go unstamped (misura counts
 * them as missing hardware stamps). A latch whose frame never reached the
 * socket (dropped) is released after STUCK_US. A port given as PATH alone
 * (one in another network namespace) is released when VALID has stayed set
 * for HOLD_US, by which time the driver has normally read the stamp.
 *
 * It sleeps in poll(): a frame wakes it; it looks at the latches every
 * POLL_US when a port has no socket, else every STUCK_US / 5 (SCHED_FIFO
 * was tried: it starved the measuring program under TCG, and gained no
 * stamp once it slept in poll()). IGB_RX_UNLATCH_TRACE=1 logs every PTP
 * frame (sequenceId, hardware stamp) and every release. It says which
 * ports it watches when it starts and, on SIGTERM or SIGINT,
 * how many latches it released on each (stderr), then exits 0.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <fcntl.h>
#include <linux/errqueue.h>
#include <linux/if_packet.h>
#include <linux/net_tstamp.h>
#include <net/if.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define TSYNCRXCTL 0xB620
#define RXSATRH 0xB630
#define VALID 0x1u
#define BAR_LEN 0x20000
#define MAX_PORTS 8
#define POLL_US 100
#define HOLD_US 1000
#define STUCK_US 50000
#define ETH_P_1588 0x88F7

static volatile sig_atomic_t stop;
static int trace; /* IGB_RX_UNLATCH_TRACE=1: one line per PTP frame */

static void on_signal(int sig)
{
    (void)sig;
    stop = 1;
}

static int64_t now_us(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000000 + t.tv_nsec / 1000;
}

/* A packet socket receiving IFNAME's PTP frames with their hardware stamps. */
static int ptp_socket(const char *ifname)
{
    int s = socket(AF_PACKET, SOCK_RAW | SOCK_NONBLOCK, htons(ETH_P_1588));
    if (s < 0) {
        perror("socket(AF_PACKET)");
        exit(1);
    }
    struct sockaddr_ll a = {0};
    a.sll_family = AF_PACKET;
    a.sll_protocol = htons(ETH_P_1588);
    a.sll_ifindex = (int)if_nametoindex(ifname);
    if (a.sll_ifindex == 0 || bind(s, (struct sockaddr *)&a, sizeof a) < 0) {
        perror(ifname);
        exit(1);
    }
    int flags = SOF_TIMESTAMPING_RX_HARDWARE | SOF_TIMESTAMPING_RAW_HARDWARE;
    if (setsockopt(s, SOL_SOCKET, SO_TIMESTAMPING, &flags, sizeof flags) < 0) {
        perror("SO_TIMESTAMPING");
        exit(1);
    }
    return s;
}

static volatile uint32_t *bar[MAX_PORTS];
static const char *name[MAX_PORTS];
static unsigned long cleared[MAX_PORTS], by_frame[MAX_PORTS];
static int64_t since[MAX_PORTS];

/* Reads RXSATRH if port i's latch is set: QEMU clears VALID. */
static void release(int i, const char *why)
{
    if (!(bar[i][TSYNCRXCTL / 4] & VALID))
        return;
    (void)bar[i][RXSATRH / 4];
    since[i] = 0;
    cleared[i]++;
    if (trace)
        fprintf(stderr, "%s: released (%s) at %lld us\n", name[i], why, (long long)now_us());
}

/* Drains port i's socket, releasing its latch at the first stamped frame. */
static void drain(int i, int s)
{
    for (;;) {
        char buf[64], ctl[256];
        struct iovec iov = {buf, sizeof buf};
        struct msghdr m = {0};
        m.msg_iov = &iov;
        m.msg_iovlen = 1;
        m.msg_control = ctl;
        m.msg_controllen = sizeof ctl;
        ssize_t len = recvmsg(s, &m, MSG_TRUNC);
        if (len < 0)
            return;
        int64_t hw = 0;
        for (struct cmsghdr *c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c)) {
            if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SO_TIMESTAMPING) {
                struct timespec ts[3];
                memcpy(ts, CMSG_DATA(c), sizeof ts);
                hw = (int64_t)ts[2].tv_sec * 1000000000 + ts[2].tv_nsec;
            }
        }
        if (trace)
            fprintf(stderr, "%s: frame %zd bytes seq %u hw %lld at %lld us\n", name[i], len,
                    len >= 46 ? (unsigned)((uint8_t)buf[44] << 8 | (uint8_t)buf[45]) : 0u,
                    (long long)hw, (long long)now_us());
        if (hw != 0) {
            unsigned long before = cleared[i];
            release(i, "frame");
            by_frame[i] += cleared[i] - before;
        }
    }
}

int main(int argc, char **argv)
{
    struct pollfd pfd[MAX_PORTS];
    int n = 0;
    for (int i = 1; i < argc && n < MAX_PORTS; i++) {
        char *path = argv[i], *ifname = strchr(path, '@');
        if (ifname)
            *ifname++ = '\0';
        int fd = open(path, O_RDWR | O_SYNC);
        if (fd < 0) {
            perror(path);
            return 1;
        }
        void *p = mmap(NULL, BAR_LEN, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (p == MAP_FAILED) {
            perror("mmap (boot with iomem=relaxed)");
            return 1;
        }
        bar[n] = p;
        name[n] = ifname && *ifname ? ifname : path;
        pfd[n].fd = ifname && *ifname ? ptp_socket(ifname) : -1;
        pfd[n].events = POLLIN;
        n++;
    }
    if (n == 0) {
        fprintf(stderr, "usage: igb-rx-unlatch /sys/bus/pci/devices/BDF/resource0[@IFNAME] ...\n");
        return 2;
    }
    trace = getenv("IGB_RX_UNLATCH_TRACE") != NULL;
    struct sigaction sa = {0};
    sa.sa_handler = on_signal;
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    for (int i = 0; i < n; i++)
        fprintf(stderr, "igb-rx-unlatch: %s: %s\n", name[i],
                pfd[i].fd >= 0 ? "released by its stamped PTP frames" : "released after 1 ms");
    struct timespec poll_ts = {0, STUCK_US / 5 * 1000};
    for (int i = 0; i < n; i++)
        if (pfd[i].fd < 0)
            poll_ts.tv_nsec = POLL_US * 1000;
    while (!stop) {
        ppoll(pfd, (nfds_t)n, &poll_ts, NULL);
        int64_t t = now_us();
        for (int i = 0; i < n; i++) {
            if (pfd[i].fd >= 0 && (pfd[i].revents & POLLIN))
                drain(i, pfd[i].fd);
            if (!(bar[i][TSYNCRXCTL / 4] & VALID)) {
                since[i] = 0;
                continue;
            }
            if (since[i] == 0)
                since[i] = t;
            else if (t - since[i] >= (pfd[i].fd >= 0 ? STUCK_US : HOLD_US))
                release(i, "timeout");
        }
    }
    for (int i = 0; i < n; i++)
        fprintf(stderr, "igb-rx-unlatch: %s: %lu latch(es) released, %lu by a stamped frame\n", name[i],
                cleared[i], by_frame[i]);
    return 0;
}
