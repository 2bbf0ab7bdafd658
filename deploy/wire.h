/* wire.h: the edge <-> cloud wire protocol (docs/deploy.md).
 *
 * A frame is a 4-byte little-endian payload length, then the payload: one
 * type byte and the type's fields, every integer a little-endian uint32.
 * Each type has one exact length (tokens counted), so a frame is either
 * well formed or rejected whole. A connection buffers what it reads and
 * what it has not yet managed to write; sockets are non-blocking. */
#ifndef HS_WIRE_H
#define HS_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "err.h"

#define WIRE_MAGIC 0x33505348u /* "HSP3" */
#define WIRE_SECRET_BYTES 32   /* the shared secret in HELLO, zero-padded */
#define WIRE_MAX_TOKENS 2048   /* tokens in one prompt or block */
#define WIRE_TEXT_MAX 200      /* bytes of an error's text */
#define WIRE_MAX_PAYLOAD (17 + 4 * WIRE_MAX_TOKENS)
#define WIRE_MAX_OUT (1 << 20) /* unsent bytes a connection may hold */

enum wire_type {
	WIRE_HELLO = 1, /* edge: magic, tenant, secret */
	WIRE_PROMPT,    /* edge: request, output tokens wanted, n, tokens */
	WIRE_BLOCK,     /* edge: request, epoch, pos, n, tokens */
	WIRE_DONE,      /* edge: request */
	WIRE_VERDICT,   /* cloud: request, epoch, verified, accepted, k, token */
	WIRE_ERROR,     /* cloud: retry, text (then it closes the connection) */
	WIRE_PING,      /* edge: request (any number, echoed) */
	WIRE_PONG,      /* cloud: the ping's request, at once */
	WIRE_START,     /* edge: as PROMPT, the cloud decoding the request
			   itself until READY (a handover start) */
	WIRE_TOKEN,     /* cloud: request, pos, token, last (1: the cloud's
			   last of a handover start; the edge drafts on) */
	WIRE_READY,     /* edge: request, pos (its draft cache holds the
			   tokens before pos) */
	WIRE_BACK,      /* edge: request, pos (a hand-back: no block in
			   flight, pos tokens committed; the cloud decodes
			   the rest, a TOKEN each) */
};

struct wire_msg {
	enum wire_type type;
	uint32_t tenant;        /* HELLO */
	uint32_t tokenizer;     /* HELLO: the edge's draft's tok_fingerprint
				   (models/tok.h); 0: not said */
	uint32_t request;       /* all but HELLO and ERROR */
	uint32_t epoch;         /* BLOCK VERDICT */
	uint32_t pos;           /* BLOCK: sequence position of tok[0]; TOKEN:
				   of token; READY; BACK */
	uint32_t out_tokens;    /* PROMPT START: tokens to generate */
	uint32_t verified;      /* VERDICT: blocks judged */
	uint32_t accepted;      /* VERDICT: of them, fully accepted */
	uint32_t k;             /* VERDICT: tokens accepted in the rejected one */
	uint32_t token;         /* VERDICT: correction, or bonus if none
				   rejected; TOKEN: the token */
	uint32_t last;          /* TOKEN: 0 or 1 */
	uint32_t n;             /* PROMPT BLOCK START: tokens */
	uint8_t retry;          /* ERROR: 1 the client may come back later (the
				   server is full or stopping), 0 it broke the
				   protocol or was refused */
	uint8_t secret[WIRE_SECRET_BYTES]; /* HELLO; zeros for none */
	int32_t tok[WIRE_MAX_TOKENS];
	char text[WIRE_TEXT_MAX + 1]; /* ERROR, NUL-terminated */
};

/* The shared secret of a file: its first line, 1 to WIRE_SECRET_BYTES
 * bytes, zero-padded into s. -1 with e's message (the file and what is
 * wrong with it). */
int wire_secret_load(const char *path, uint8_t s[WIRE_SECRET_BYTES],
		     struct err *e);
/* The same from text (an environment variable's value). */
int wire_secret_parse(const char *what, const char *text,
		      uint8_t s[WIRE_SECRET_BYTES], struct err *e);
/* Whether a and b are the same secret, in time independent of where they
 * differ. */
bool wire_secret_equal(const uint8_t *a, const uint8_t *b);

/* A little-endian uint32 at p (the wire's integers). */
void wire_put32(uint8_t *p, uint32_t v);
uint32_t wire_get32(const uint8_t *p);

/* Bytes of m's whole frame (length prefix included). */
size_t wire_size(const struct wire_msg *m);

/* Writes m's frame to buf (wire_size(m) bytes). */
void wire_encode(const struct wire_msg *m, uint8_t *buf);

/* Decodes the first frame of buf[0..len). Returns its size, 0 when the
 * frame is not complete yet, or -1 with e's message when it is malformed
 * (an oversized or short length, an unknown type, a length that does not
 * fit the type, a token count of 0 or over WIRE_MAX_TOKENS). */
long wire_decode(const uint8_t *buf, size_t len, struct wire_msg *m,
		 struct err *e);

/* A connection over a non-blocking socket. */
struct wire_conn {
	int fd;                  /* owned; -1 when closed */
	uint8_t *in, *out;       /* owned buffers */
	size_t in_len, in_cap, out_len, out_cap;
};

/* Takes ownership of fd and makes it non-blocking. */
void wire_conn_init(struct wire_conn *c, int fd);
void wire_conn_release(struct wire_conn *c); /* closes fd */

/* Reads what the socket has. Returns 1 when bytes came, 0 when none were
 * waiting, -1 at end of stream or on an error (e says which). */
int wire_conn_read(struct wire_conn *c, struct err *e);

/* The next complete message read: 1 (in m), 0 for none yet, -1 malformed. */
int wire_conn_next(struct wire_conn *c, struct wire_msg *m, struct err *e);

/* Queues m's frame and writes as much as the socket takes. -1 when the
 * peer is gone or has let WIRE_MAX_OUT bytes pile up. */
int wire_conn_send(struct wire_conn *c, const struct wire_msg *m,
		   struct err *e);
/* Writes queued bytes; -1 when the peer is gone. */
int wire_conn_flush(struct wire_conn *c, struct err *e);

/* A TCP connection to host (IPv4 dotted quad) and port, Nagle off (a
 * block must leave when it is written); -1 with e's message. */
int wire_dial(const char *host, int port, struct err *e);

/* poll(2) with a timeout in seconds (< 0: none), to the nanosecond:
 * millisecond rounding would add up to a millisecond to every emulated
 * delay. Returns poll's result; EINTR gives 0. */
struct pollfd;
int wire_poll(struct pollfd *fds, unsigned long n, double timeout_s);

#endif
