/* wire.c: frames and buffered non-blocking connections.
 *
 * in[0..in_len) holds bytes read and not yet decoded (a partial frame at
 * most WIRE_MAX_PAYLOAD + 4 long once whole frames are taken);
 * out[0..out_len) holds encoded frames the socket has not taken yet. */
#define _GNU_SOURCE /* ppoll */
#include "wire.h"
#include "mem.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

void wire_put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

uint32_t wire_get32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

/* The secret in bytes[0 .. n) (a line, the rest ignored; cut: the text
 * went on past them) into s */
static int secret_of(const char *what, const char *bytes, size_t n,
		     bool cut, uint8_t s[WIRE_SECRET_BYTES], struct err *e)
{
	size_t len = 0;
	const char *nul;

	while (len < n && bytes[len] != '\r' && bytes[len] != '\n')
		len++;
	if ((nul = memchr(bytes, 0, len)))
		return err_set(e, "%s: a NUL byte at byte %zu of the secret (a "
			       "secret is a line of text)", what,
			       (size_t)(nul - bytes) + 1);
	if (len == n && cut)
		return err_set(e, "%s: a secret of more than %zu bytes (1 to %d "
			       "allowed)", what, n, WIRE_SECRET_BYTES);
	if (len < 1 || len > WIRE_SECRET_BYTES)
		return err_set(e, "%s: a secret of %zu bytes (1 to %d allowed)",
			       what, len, WIRE_SECRET_BYTES);
	memset(s, 0, WIRE_SECRET_BYTES);
	memcpy(s, bytes, len);
	return 0;
}

int wire_secret_parse(const char *what, const char *text,
		      uint8_t s[WIRE_SECRET_BYTES], struct err *e)
{
	return secret_of(what, text, strlen(text), false, s, e);
}

int wire_secret_load(const char *path, uint8_t s[WIRE_SECRET_BYTES],
		     struct err *e)
{
	char line[256];
	FILE *f = fopen(path, "r");
	size_t got;
	bool cut;

	if (!f)
		return err_set(e, "%s: %s", path, strerror(errno));
	got = fread(line, 1, sizeof(line), f);
	if (ferror(f)) { /* a folder opens, and reads nothing */
		err_set(e, "%s: %s", path, strerror(errno));
		fclose(f);
		return -1;
	}
	cut = got == sizeof(line) && fgetc(f) != EOF;
	fclose(f);
	return secret_of(path, line, got, cut, s, e);
}

bool wire_secret_equal(const uint8_t *a, const uint8_t *b)
{
	uint8_t d = 0;

	for (int i = 0; i < WIRE_SECRET_BYTES; i++)
		d |= a[i] ^ b[i];
	return d == 0;
}

/* Payload bytes of a type before its tokens or text; 0 for no such type. */
static size_t fixed_len(uint8_t type)
{
	switch (type) {
	case WIRE_HELLO: return 1 + 12 + WIRE_SECRET_BYTES;
	case WIRE_PROMPT: case WIRE_START: return 1 + 12;
	case WIRE_BLOCK: case WIRE_TOKEN: return 1 + 16;
	case WIRE_READY: case WIRE_BACK: return 1 + 8;
	case WIRE_DONE: case WIRE_PING: case WIRE_PONG: return 1 + 4;
	case WIRE_VERDICT: return 1 + 24;
	case WIRE_ERROR: return 2;
	}
	return 0;
}

/* Whether a type carries tokens after its fixed part */
static bool has_tokens(enum wire_type t)
{
	return t == WIRE_PROMPT || t == WIRE_START || t == WIRE_BLOCK;
}

static size_t payload_len(const struct wire_msg *m)
{
	size_t n = fixed_len((uint8_t)m->type);

	HS_ASSERT(n > 0);
	if (has_tokens(m->type))
		n += 4 * (size_t)m->n;
	else if (m->type == WIRE_ERROR)
		n += strlen(m->text);
	return n;
}

size_t wire_size(const struct wire_msg *m)
{
	return 4 + payload_len(m);
}

void wire_encode(const struct wire_msg *m, uint8_t *buf)
{
	size_t len = payload_len(m);
	uint8_t *p = buf + 5;

	HS_ASSERT(m->n <= WIRE_MAX_TOKENS && strlen(m->text) <= WIRE_TEXT_MAX);
	wire_put32(buf, (uint32_t)len);
	buf[4] = (uint8_t)m->type;
	switch (m->type) {
	case WIRE_HELLO:
		wire_put32(p, WIRE_MAGIC);
		wire_put32(p + 4, m->tenant);
		wire_put32(p + 8, m->tokenizer);
		memcpy(p + 12, m->secret, WIRE_SECRET_BYTES);
		break;
	case WIRE_PROMPT:
	case WIRE_START:
		wire_put32(p, m->request);
		wire_put32(p + 4, m->out_tokens);
		wire_put32(p + 8, m->n);
		p += 12;
		break;
	case WIRE_TOKEN:
		wire_put32(p, m->request);
		wire_put32(p + 4, m->pos);
		wire_put32(p + 8, m->token);
		wire_put32(p + 12, m->last);
		break;
	case WIRE_READY:
	case WIRE_BACK:
		wire_put32(p, m->request);
		wire_put32(p + 4, m->pos);
		break;
	case WIRE_BLOCK:
		wire_put32(p, m->request);
		wire_put32(p + 4, m->epoch);
		wire_put32(p + 8, m->pos);
		wire_put32(p + 12, m->n);
		p += 16;
		break;
	case WIRE_DONE:
	case WIRE_PING:
	case WIRE_PONG:
		wire_put32(p, m->request);
		break;
	case WIRE_VERDICT:
		wire_put32(p, m->request);
		wire_put32(p + 4, m->epoch);
		wire_put32(p + 8, m->verified);
		wire_put32(p + 12, m->accepted);
		wire_put32(p + 16, m->k);
		wire_put32(p + 20, m->token);
		break;
	case WIRE_ERROR:
		p[0] = m->retry;
		memcpy(p + 1, m->text, strlen(m->text));
		break;
	}
	if (has_tokens(m->type))
		for (uint32_t i = 0; i < m->n; i++)
			wire_put32(p + 4 * i, (uint32_t)m->tok[i]);
}

long wire_decode(const uint8_t *buf, size_t len, struct wire_msg *m,
		 struct err *e)
{
	size_t plen, fixed;
	const uint8_t *p = buf + 5;

	if (len < 4)
		return 0;
	plen = wire_get32(buf);
	if (plen < 1 || plen > WIRE_MAX_PAYLOAD)
		return err_set(e, "frame of %zu bytes (1 to %d allowed)", plen,
			       WIRE_MAX_PAYLOAD);
	if (len < 4 + plen)
		return 0;
	fixed = fixed_len(buf[4]);
	if (!fixed)
		return err_set(e, "unknown message type %u", buf[4]);
	if (plen < fixed)
		return err_set(e, "message type %u of %zu bytes, needs %zu",
			       buf[4], plen, fixed);
	memset(m, 0, offsetof(struct wire_msg, tok));
	m->text[0] = 0;
	m->type = (enum wire_type)buf[4];
	switch (m->type) {
	case WIRE_HELLO:
		if (wire_get32(p) != WIRE_MAGIC)
			return err_set(e, "hello without the protocol's magic");
		m->tenant = wire_get32(p + 4);
		m->tokenizer = wire_get32(p + 8);
		memcpy(m->secret, p + 12, WIRE_SECRET_BYTES);
		break;
	case WIRE_PROMPT:
	case WIRE_START:
		m->request = wire_get32(p);
		m->out_tokens = wire_get32(p + 4);
		m->n = wire_get32(p + 8);
		break;
	case WIRE_TOKEN:
		m->request = wire_get32(p);
		m->pos = wire_get32(p + 4);
		m->token = wire_get32(p + 8);
		m->last = wire_get32(p + 12);
		if (m->last > 1)
			return err_set(e, "token with last %u (0 or 1)", m->last);
		break;
	case WIRE_READY:
	case WIRE_BACK:
		m->request = wire_get32(p);
		m->pos = wire_get32(p + 4);
		break;
	case WIRE_BLOCK:
		m->request = wire_get32(p);
		m->epoch = wire_get32(p + 4);
		m->pos = wire_get32(p + 8);
		m->n = wire_get32(p + 12);
		break;
	case WIRE_DONE:
	case WIRE_PING:
	case WIRE_PONG:
		m->request = wire_get32(p);
		break;
	case WIRE_VERDICT:
		m->request = wire_get32(p);
		m->epoch = wire_get32(p + 4);
		m->verified = wire_get32(p + 8);
		m->accepted = wire_get32(p + 12);
		m->k = wire_get32(p + 16);
		m->token = wire_get32(p + 20);
		break;
	case WIRE_ERROR:
		if (plen - fixed > WIRE_TEXT_MAX)
			return err_set(e, "error text of %zu bytes", plen - fixed);
		if (p[0] > 1)
			return err_set(e, "error with retry byte %u", p[0]);
		m->retry = p[0];
		memcpy(m->text, p + 1, plen - fixed);
		m->text[plen - fixed] = 0;
		return (long)(4 + plen);
	}
	if (has_tokens(m->type)) {
		if (m->n < 1 || m->n > WIRE_MAX_TOKENS)
			return err_set(e, "%u tokens in a message (1 to %d allowed)",
				       m->n, WIRE_MAX_TOKENS);
		p += fixed - 1;
		for (uint32_t i = 0; i < m->n && 4 * (size_t)i + 4 <= plen - fixed;
		     i++)
			m->tok[i] = (int32_t)wire_get32(p + 4 * i);
	}
	if (plen != payload_len(m))
		return err_set(e, "message type %u of %zu bytes, needs %zu",
			       buf[4], plen, payload_len(m));
	return (long)(4 + plen);
}

void wire_conn_init(struct wire_conn *c, int fd)
{
	*c = (struct wire_conn){ .fd = fd };
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
}

void wire_conn_release(struct wire_conn *c)
{
	if (c->fd >= 0)
		close(c->fd);
	free(c->in);
	free(c->out);
	*c = (struct wire_conn){ .fd = -1 };
}

int wire_conn_read(struct wire_conn *c, struct err *e)
{
	int got = 0;

	for (;;) {
		ssize_t r;

		if (c->in_cap - c->in_len < 4096) {
			c->in_cap = c->in_cap ? 2 * c->in_cap : 16384;
			c->in = xrealloc(c->in, c->in_cap);
		}
		r = read(c->fd, c->in + c->in_len, c->in_cap - c->in_len);
		if (r > 0) {
			c->in_len += (size_t)r;
			got = 1;
			/* a whole frame is here: let the caller decode it
			 * before reading more (bounds the buffer) */
			if (c->in_len >= 4 + WIRE_MAX_PAYLOAD)
				return 1;
			continue;
		}
		if (r == 0)
			return err_set(e, "connection closed by the peer");
		if (errno == EINTR)
			continue;
		if (errno == EAGAIN || errno == EWOULDBLOCK)
			return got;
		return err_set(e, "read: %s", strerror(errno));
	}
}

int wire_conn_next(struct wire_conn *c, struct wire_msg *m, struct err *e)
{
	long n = wire_decode(c->in, c->in_len, m, e);

	if (n <= 0)
		return (int)n;
	memmove(c->in, c->in + n, c->in_len - (size_t)n);
	c->in_len -= (size_t)n;
	return 1;
}

int wire_conn_flush(struct wire_conn *c, struct err *e)
{
	size_t done = 0;

	while (done < c->out_len) {
		ssize_t w = send(c->fd, c->out + done, c->out_len - done,
				 MSG_NOSIGNAL);

		if (w > 0) {
			done += (size_t)w;
		} else if (w < 0 && errno == EINTR) {
			continue;
		} else if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			break;
		} else {
			return err_set(e, "write: %s", strerror(errno));
		}
	}
	memmove(c->out, c->out + done, c->out_len - done);
	c->out_len -= done;
	return 0;
}

int wire_conn_send(struct wire_conn *c, const struct wire_msg *m,
		   struct err *e)
{
	size_t n = wire_size(m);

	if (c->out_len + n > WIRE_MAX_OUT)
		return err_set(e, "peer not reading: %zu bytes unsent",
			       c->out_len);
	if (c->out_cap < c->out_len + n) {
		c->out_cap = c->out_len + n > 2 * c->out_cap ?
				     c->out_len + n : 2 * c->out_cap;
		c->out = xrealloc(c->out, c->out_cap);
	}
	wire_encode(m, c->out + c->out_len);
	c->out_len += n;
	return wire_conn_flush(c, e);
}

int wire_poll(struct pollfd *fds, unsigned long n, double timeout_s)
{
	struct timespec ts;
	int r;

	if (timeout_s >= 0) {
		ts.tv_sec = (time_t)timeout_s;
		ts.tv_nsec = (long)((timeout_s - (double)ts.tv_sec) * 1e9);
	}
	r = ppoll(fds, (nfds_t)n, timeout_s >= 0 ? &ts : NULL, NULL);
	if (r < 0 && errno == EINTR) { /* nothing is ready, whatever was */
		for (unsigned long i = 0; i < n; i++)
			fds[i].revents = 0;
		return 0;
	}
	return r;
}

int wire_dial(const char *host, int port, struct err *e)
{
	struct sockaddr_in a = { .sin_family = AF_INET,
				 .sin_port = htons((uint16_t)port) };
	int fd, one = 1;

	if (inet_pton(AF_INET, host, &a.sin_addr) != 1)
		return err_set(e, "'%s' is not an IPv4 address", host);
	fd = socket(AF_INET, SOCK_STREAM, 0);
	if (fd < 0)
		return err_set(e, "socket: %s", strerror(errno));
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0) {
		err_set(e, "%s:%d: %s", host, port, strerror(errno));
		close(fd);
		return -1;
	}
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return fd;
}
