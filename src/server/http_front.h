/* http_front.h - the front stage of `tailcut serve`: one thread that accepts connections, waits (bounded in time, bytes
 * and count) for each one's first request head without consuming it (MSG_PEEK), checks it (http_head.c) and either
 * hands the connection to libmicrohttpd (MHD_add_connection: it then reads the same bytes) or answers a malformed head
 * itself with a KServe JSON error and closes, where libmicrohttpd 0.9.75 would answer with an HTML page. */
#pragma once
#include <microhttpd.h>
#include <stdatomic.h>
#include <stddef.h>

typedef struct srv_front srv_front;

typedef struct srv_front_options {
    int listen_fd;               /* a listening, non-blocking TCP socket; the front stage owns it from now on */
    struct MHD_Daemon *daemon;   /* started with MHD_USE_NO_LISTEN_SOCKET | MHD_USE_ITC */
    unsigned timeout_s;          /* a connection whose head is not complete by then is closed (as --http-timeout) */
    size_t max_pending;          /* connections waiting for their head at once; past it the oldest is closed */
    atomic_int *open;            /* connections libmicrohttpd holds: the front stage adds one per connection it hands
                                    over, the server takes it off when libmicrohttpd notifies the close */
    int max_open;                /* past it a connection gets a JSON 503 instead */
} srv_front_options;

/* Starts the thread. Returns NULL (and closes listen_fd) when it cannot. */
srv_front *srv_front_start(const srv_front_options *o);

/* Stops accepting (closes the listening socket: new connections are refused) and closes the connections still
 * waiting for their head; connections handed to libmicrohttpd stay there. NULL is ignored. */
void srv_front_stop(srv_front *f);

/* A listening IPv4 TCP socket (SO_REUSEADDR, non-blocking, close-on-exec) on addr, or -1 with errno set. */
int srv_front_listen(const struct sockaddr_in *addr);
