/*
 * The webhook row's receiver: a forked process on 127.0.0.1 (a free
 * port) that answers every request "200 OK" with an empty body and keeps
 * the connection open (HTTP/1.1), one poll(2) loop over all connections.
 * It reads each request's headers and Content-Length bytes of body,
 * checks nothing else, and counts the requests and the connections in
 * shared words.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../app/lib/common.h"
#include "bench.h"

#define CONNS_MAX 512
#define REQ_MAX 65536 /* headers and body of one request */

static const char answer[] = "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n";

struct conn {
	int fd; /* -1: closed, removed after the round */
	size_t len;
	char buf[REQ_MAX];
};

/* The Content-Length of a header block of n bytes; 0 when there is none. */
static size_t
content_length(const char *h, size_t n)
{
	const char *p = h, *end = h + n, *eol;

	while (p < end && (eol = memchr(p, '\n', (size_t)(end - p))) != NULL) {
		if ((size_t)(eol - p) > 15 &&
		    strncasecmp(p, "content-length:", 15) == 0)
			return (size_t)strtoul(p + 15, NULL, 10);
		p = eol + 1;
	}
	return 0;
}

/* Answers every whole request in c's buffer; -1 to close it. */
static int
answer_all(struct conn *c, volatile int64_t *count)
{
	const char *hend;
	size_t head, total;

	while ((hend = memmem(c->buf, c->len, "\r\n\r\n", 4)) != NULL) {
		head = (size_t)(hend - c->buf) + 4;
		total = head + content_length(c->buf, head);
		if (total > REQ_MAX)
			return -1;
		if (c->len < total)
			return 0;
		if (write(c->fd, answer, sizeof(answer) - 1) !=
		    (ssize_t)sizeof(answer) - 1)
			return -1;
		__atomic_add_fetch(count, 1, __ATOMIC_RELAXED);
		memmove(c->buf, c->buf + total, c->len - total);
		c->len -= total;
	}
	return c->len == REQ_MAX ? -1 : 0;
}

static void
serve(int lfd, volatile int64_t *count, volatile int64_t *accepted)
{
	static struct pollfd pf[CONNS_MAX + 1];
	struct conn **c, **spare;
	int n = 0, nspare = 0, np, i, j, fd, one = 1;
	ssize_t r;

	if ((c = calloc(CONNS_MAX, sizeof(*c))) == NULL ||
	    (spare = calloc(CONNS_MAX, sizeof(*spare))) == NULL)
		_exit(1);
	for (;;) {
		pf[0].fd = lfd;
		pf[0].events = POLLIN;
		for (i = 0; i < n; i++) {
			pf[i + 1].fd = c[i]->fd;
			pf[i + 1].events = POLLIN;
		}
		np = n;
		if (poll(pf, (nfds_t)np + 1, -1) == -1) {
			if (errno == EINTR)
				continue;
			_exit(1);
		}
		for (i = 0; i < np; i++) {
			if (pf[i + 1].revents == 0)
				continue;
			r = read(c[i]->fd, c[i]->buf + c[i]->len,
			    REQ_MAX - c[i]->len);
			if (r > 0)
				c[i]->len += (size_t)r;
			if (r <= 0 || answer_all(c[i], count) == -1) {
				close(c[i]->fd);
				c[i]->fd = -1;
			}
		}
		for (i = j = 0; i < n; i++) {
			if (c[i]->fd == -1) {
				spare[nspare++] = c[i];
				continue;
			}
			c[j++] = c[i];
		}
		n = j;
		if ((pf[0].revents & POLLIN) == 0)
			continue;
		while (n < CONNS_MAX &&
		       (fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC)) != -1) {
			/* kept for the next connection: a client that opens
			 * one per request must not make the receiver slow */
			if (nspare > 0)
				c[n] = spare[--nspare];
			else if ((c[n] = malloc(sizeof(**c))) == NULL) {
				close(fd);
				break;
			}
			c[n]->len = 0;
			setsockopt(
			    fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
			c[n]->fd = fd;
			n++;
			__atomic_add_fetch(accepted, 1, __ATOMIC_RELAXED);
		}
	}
}

void
bench_receiver_start(struct bench_receiver *rc)
{
	struct sockaddr_in a;
	socklen_t alen = sizeof(a);
	int lfd, one = 1;
	pid_t p;

	memset(rc, 0, sizeof(*rc));
	rc->requests = mmap(NULL, 2 * sizeof(*rc->requests),
	    PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (rc->requests == MAP_FAILED) {
		perror("bench: receiver");
		exit(1);
	}
	rc->accepted = rc->requests + 1;
	*rc->requests = *rc->accepted = 0;
	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if ((lfd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
		 0)) == -1 ||
	    setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ==
		-1 ||
	    bind(lfd, (struct sockaddr *)&a, sizeof(a)) == -1 ||
	    listen(lfd, 1024) == -1 ||
	    getsockname(lfd, (struct sockaddr *)&a, &alen) == -1) {
		perror("bench: receiver");
		exit(1);
	}
	rc->port = ntohs(a.sin_port);
	fflush(stdout);
	if ((p = fork()) == -1) {
		perror("bench: receiver");
		exit(1);
	}
	if (p == 0) {
		/* dies with the bench, whatever ends it */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		serve(lfd, rc->requests, rc->accepted);
	}
	close(lfd);
	rc->pid = (int)p;
}

void
bench_receiver_stop(struct bench_receiver *rc)
{
	if (rc->pid > 0) {
		kill((pid_t)rc->pid, SIGTERM);
		waitpid((pid_t)rc->pid, NULL, 0);
		rc->pid = 0;
	}
	if (rc->requests != NULL) {
		munmap((void *)rc->requests, 2 * sizeof(*rc->requests));
		rc->requests = rc->accepted = NULL;
	}
}
