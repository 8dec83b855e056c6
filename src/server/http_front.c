/* http_front.c - the front stage of `tailcut serve` (see http_front.h): one epoll thread for the listening socket and
 * the connections that have not sent a whole first head yet. Bounds: at most max_pending such connections (past it the
 * oldest is closed, so slow ones cannot lock new clients out), each for at most timeout_s, each peeked at most
 * PEEK_BUDGET bytes in all (a head that arrives in very many pieces goes to libmicrohttpd unchecked rather than costing
 * the thread quadratic time), SO_RCVLOWAT so that a partial head wakes the thread only when more bytes arrive. A
 * refused connection gets its JSON answer and "Connection: close", then is drained for at most LINGER_S (so that the
 * client reads the answer rather than a reset) and closed. */
#include "http_front.h"

#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "codec.h"
#include "http_guard.h"
#include "http_head.h"

#define PEEK_CAP (SRV_MAX_HEADER_BYTES + 4096) /* the head limit, and room for the chunk lines after a head */
#define PEEK_BUDGET ((size_t)16 * PEEK_CAP)    /* bytes peeked per connection in all */
#define LINGER_S 2.0
#define LINGER_BYTES ((size_t)1 << 20)

typedef struct front_conn {
    int fd;
    bool linger;                 /* answered and shut down for writing: drained until the client closes */
    int lowat;                   /* SO_RCVLOWAT set on the socket (1: the default) */
    size_t peeked;               /* bytes peeked (or drained, lingering) so far */
    double deadline;             /* CLOCK_MONOTONIC seconds */
    struct sockaddr_storage addr;
    socklen_t addr_len;
    struct front_conn *prev, *next;
} front_conn;

typedef struct conn_list { /* in order of deadline: every entry of a list waits the same time */
    front_conn *head, *tail;
} conn_list;

struct srv_front {
    srv_front_options o;
    int ep, wake;
    pthread_t thread;
    conn_list pending, lingering;
    size_t count;          /* entries of both lists */
    double accept_resume;  /* > 0: accepting paused (out of file descriptors) until then */
    char buf[PEEK_CAP];
};

static int listen_tag, wake_tag; /* epoll data of the listening socket and of the stop eventfd */

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void list_push(conn_list *l, front_conn *c) {
    c->next = NULL;
    c->prev = l->tail;
    if (l->tail) l->tail->next = c;
    else l->head = c;
    l->tail = c;
}

static void list_remove(conn_list *l, front_conn *c) {
    if (c->prev) c->prev->next = c->next;
    else l->head = c->next;
    if (c->next) c->next->prev = c->prev;
    else l->tail = c->prev;
    c->prev = c->next = NULL;
}

/* Reads and discards what has arrived on fd, at most LINGER_BYTES. */
static void discard_input(srv_front *f, int fd) {
    ssize_t got;
    for (size_t n = 0; n < LINGER_BYTES && (got = recv(fd, f->buf, sizeof f->buf, MSG_DONTWAIT)) > 0;) n += (size_t)got;
}

/* Forgets c (removed from epoll by close); closes its socket unless keep_fd, after reading what is left in it (a
 * socket closed with unread bytes sends a reset, and the client may lose what it was sent or see an error). */
static void drop(srv_front *f, front_conn *c, bool keep_fd) {
    list_remove(c->linger ? &f->lingering : &f->pending, c);
    f->count--;
    if (!keep_fd) {
        discard_input(f, c->fd);
        close(c->fd);
    }
    free(c);
}

static void set_lowat(front_conn *c, int v) {
    if (c->lowat == v) return;
    if (setsockopt(c->fd, SOL_SOCKET, SO_RCVLOWAT, &v, sizeof v) == 0) c->lowat = v;
}

/* Answers a refused head: the bytes that came are consumed, the JSON error sent with Connection: close, the socket
 * shut down for writing and drained a little longer (see the top of the file). */
static void refuse(srv_front *f, front_conn *c, int status, const char *msg) {
    discard_input(f, c->fd);
    char *body = srv_error_json(msg);
    const char *text = body ? body : "{\"error\":\"malformed request\"}";
    const char *phrase = MHD_get_reason_phrase_for((unsigned)status);
    char head[256];
    const int hn = snprintf(head, sizeof head,
                            "HTTP/1.1 %d %s\r\nContent-Type: application/json\r\nContent-Length: %zu\r\n"
                            "Connection: close\r\n\r\n", status, phrase && *phrase ? phrase : "Error", strlen(text));
    struct iovec iov[2] = {{head, (size_t)hn}, {(void *)text, strlen(text)}};
    struct msghdr mh = {.msg_iov = iov, .msg_iovlen = 2};
    (void)!sendmsg(c->fd, &mh, MSG_NOSIGNAL | MSG_DONTWAIT); /* a fresh socket's buffer holds it whole */
    free(body);
    shutdown(c->fd, SHUT_WR);
    set_lowat(c, 1);
    list_remove(&f->pending, c);
    c->linger = true;
    c->peeked = 0;
    c->deadline = now_s() + LINGER_S;
    list_push(&f->lingering, c);
}

/* The head is acceptable (or not worth checking further): libmicrohttpd takes the connection, unless it is full. */
static void hand_over(srv_front *f, front_conn *c) {
    set_lowat(c, 1);
    if (atomic_load(f->o.open) >= f->o.max_open) { /* libmicrohttpd would close it without a word */
        char msg[96];
        snprintf(msg, sizeof msg, "server busy: %d connections are open; retry later", f->o.max_open);
        refuse(f, c, 503, msg);
        return;
    }
    epoll_ctl(f->ep, EPOLL_CTL_DEL, c->fd, NULL);
    const int fd = c->fd;
    struct sockaddr_storage addr = c->addr;
    const socklen_t len = c->addr_len;
    drop(f, c, true);
    atomic_fetch_add(f->o.open, 1); /* until libmicrohttpd notifies its close */
    if (MHD_add_connection(f->o.daemon, fd, (const struct sockaddr *)&addr, len) != MHD_YES)
        atomic_fetch_sub(f->o.open, 1); /* it closed fd */
}

/* Looks at what has arrived on a connection that has not sent a whole head. */
static void on_pending(srv_front *f, front_conn *c, uint32_t events) {
    const ssize_t n = recv(c->fd, f->buf, sizeof f->buf, MSG_PEEK | MSG_DONTWAIT);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return;
    if (n <= 0) { /* closed (or failed) before a whole head: nothing to answer */
        drop(f, c, false);
        return;
    }
    c->peeked += (size_t)n;
    char msg[192];
    const int st = srv_head_check(f->buf, (size_t)n, SRV_MAX_HEADER_BYTES, msg, sizeof msg);
    if (st == SRV_HEAD_OK || (st == SRV_HEAD_MORE && c->peeked > PEEK_BUDGET)) {
        hand_over(f, c);
    } else if (st != SRV_HEAD_MORE) {
        refuse(f, c, st, msg);
    } else if (events & (EPOLLRDHUP | EPOLLHUP | EPOLLERR)) {
        drop(f, c, false); /* the client stopped sending in the middle of its head */
    } else {
        set_lowat(c, (int)n + 1); /* wake up when more has arrived */
    }
}

static void on_lingering(srv_front *f, front_conn *c) {
    for (;;) {
        const ssize_t n = recv(c->fd, f->buf, sizeof f->buf, MSG_DONTWAIT);
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
        if (n <= 0 || (c->peeked += (size_t)n) > LINGER_BYTES) break;
    }
    drop(f, c, false);
}

/* Room for one more connection: past max_pending the oldest waiting one goes (a lingering one first). */
static void make_room(srv_front *f) {
    while (f->count >= f->o.max_pending) {
        front_conn *old = f->lingering.head ? f->lingering.head : f->pending.head;
        if (!old) return;
        drop(f, old, false);
    }
}

static void accept_all(srv_front *f) {
    for (int k = 0; k < 256; k++) {
        front_conn *c = calloc(1, sizeof *c);
        if (!c) return;
        c->addr_len = sizeof c->addr;
        c->fd = accept4(f->o.listen_fd, (struct sockaddr *)&c->addr, &c->addr_len, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (c->fd < 0) {
            const int e = errno;
            free(c);
            if (e == EMFILE || e == ENFILE || e == ENOBUFS || e == ENOMEM) {
                /* Out of descriptors: stop accepting for a moment (the socket stays readable: no busy loop). */
                struct epoll_event ev = {.events = 0, .data.ptr = &listen_tag};
                epoll_ctl(f->ep, EPOLL_CTL_MOD, f->o.listen_fd, &ev);
                f->accept_resume = now_s() + 0.1;
            }
            if (e == EINTR || e == ECONNABORTED || e == EPROTO) continue;
            return;
        }
        make_room(f);
        c->lowat = 1;
        c->deadline = now_s() + (double)f->o.timeout_s;
        list_push(&f->pending, c);
        f->count++;
        struct epoll_event ev = {.events = EPOLLIN | EPOLLRDHUP, .data.ptr = c};
        if (epoll_ctl(f->ep, EPOLL_CTL_ADD, c->fd, &ev) != 0) {
            drop(f, c, false);
            continue;
        }
        on_pending(f, c, 0); /* the head often came with the handshake's last packet: no wait for epoll */
    }
}

/* Milliseconds to the next deadline (-1: none). */
static int next_timeout_ms(const srv_front *f, double now) {
    double t = -1;
    const front_conn *a = f->pending.head, *b = f->lingering.head;
    if (a) t = a->deadline;
    if (b && (t < 0 || b->deadline < t)) t = b->deadline;
    if (f->accept_resume > 0 && (t < 0 || f->accept_resume < t)) t = f->accept_resume;
    if (t < 0) return -1;
    return t <= now ? 0 : (int)((t - now) * 1000.0) + 1;
}

static void expire(srv_front *f, double now) {
    while (f->pending.head && f->pending.head->deadline <= now) drop(f, f->pending.head, false);
    while (f->lingering.head && f->lingering.head->deadline <= now) drop(f, f->lingering.head, false);
    if (f->accept_resume > 0 && f->accept_resume <= now) {
        f->accept_resume = 0;
        struct epoll_event ev = {.events = EPOLLIN, .data.ptr = &listen_tag};
        epoll_ctl(f->ep, EPOLL_CTL_MOD, f->o.listen_fd, &ev);
    }
}

static void *front_main(void *arg) {
    srv_front *f = arg;
    struct epoll_event evs[64];
    for (;;) {
        const int n = epoll_wait(f->ep, evs, 64, next_timeout_ms(f, now_s()));
        for (int i = 0; i < n; i++) {
            void *p = evs[i].data.ptr;
            if (p == &wake_tag) return NULL;
            if (p == &listen_tag) {
                accept_all(f);
                continue;
            }
            front_conn *c = p;
            if (c->linger) on_lingering(f, c);
            else on_pending(f, c, evs[i].events);
        }
        expire(f, now_s());
    }
}

int srv_front_listen(const struct sockaddr_in *addr) {
    const int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) return -1;
    const int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (bind(fd, (const struct sockaddr *)addr, sizeof *addr) != 0 || listen(fd, SOMAXCONN) != 0) {
        const int e = errno;
        close(fd);
        errno = e;
        return -1;
    }
    return fd;
}

srv_front *srv_front_start(const srv_front_options *o) {
    srv_front *f = calloc(1, sizeof *f);
    if (!f) {
        close(o->listen_fd);
        return NULL;
    }
    f->o = *o;
    if (f->o.max_pending < 1) f->o.max_pending = 1;
    f->ep = epoll_create1(EPOLL_CLOEXEC);
    f->wake = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    struct epoll_event lev = {.events = EPOLLIN, .data.ptr = &listen_tag};
    struct epoll_event wev = {.events = EPOLLIN, .data.ptr = &wake_tag};
    if (f->ep < 0 || f->wake < 0 || epoll_ctl(f->ep, EPOLL_CTL_ADD, o->listen_fd, &lev) != 0 ||
        epoll_ctl(f->ep, EPOLL_CTL_ADD, f->wake, &wev) != 0 || pthread_create(&f->thread, NULL, front_main, f) != 0) {
        if (f->ep >= 0) close(f->ep);
        if (f->wake >= 0) close(f->wake);
        close(o->listen_fd);
        free(f);
        return NULL;
    }
    return f;
}

void srv_front_stop(srv_front *f) {
    if (!f) return;
    const uint64_t one = 1;
    (void)!write(f->wake, &one, sizeof one);
    pthread_join(f->thread, NULL);
    close(f->o.listen_fd);
    while (f->pending.head) drop(f, f->pending.head, false);
    while (f->lingering.head) drop(f, f->lingering.head, false);
    close(f->ep);
    close(f->wake);
    free(f);
}
