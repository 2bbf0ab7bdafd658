/* rig.h: what the loopback tests of the real deployment share
 * (test_deploy.c, test_faults.c): child processes waited for with a
 * deadline, blocking raw clients that speak the wire protocol by hand, and
 * a rig of a server and edge clients forked over loopback TCP whose outputs
 * are checked against the target's own greedy continuations.
 *
 * Every child is waited for with a deadline and killed past it, so that a
 * hang fails the case instead of blocking the run; children leave with
 * _exit and report through their exit status and files in the case's
 * temporary folder. */
#ifndef HS_TEST_RIG_H
#define HS_TEST_RIG_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "cfg.h"
#include "llama.h"
#include "serve.h"
#include "tok.h"
#include "wire.h"

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

#define TARGET "stories260K"       /* f32 */
#define DRAFT "stories260K:w4a16"

#define CHILD_DEADLINE_S 120.0 /* a hang fails here (ASan builds are slow) */
#define SOCKET_TIMEOUT_S 30    /* a raw client's blocking reads */
#define MAX_KIDS 8

#define E_PROMPT 6         /* prompt tokens */
#define E_OUT 40           /* output tokens of each request */
#define E_REQUESTS 2       /* per edge */
#define E_BUDGET 64
#define E_CHUNK 16
#define E_WAN "{\"rtt_s\": 0.004}"
#define E_NPROMPTS 14      /* prompts: 2 per edge, edges 0 .. 6 */

/* The first n tokens of text (BOS first); 0, or -1 when it is shorter. */
int prompt_of(const struct tok *t, const char *text, int n, int *out);

struct kids {
	pid_t pid[MAX_KIDS]; /* 0 once waited for */
	char name[MAX_KIDS][32];
	int n;
};

/* fork with stdio flushed first (children leave with _exit). */
pid_t kid_fork(struct kids *k, const char *name);
/* Waits for child i for at most limit_s and kills it past that (a
 * failure). Returns its exit status, or -1 when it was killed or died of a
 * signal. */
int kid_wait(struct kids *k, int i, double limit_s);
/* Waits for every child left for at most limit_s, kills those left; a
 * failure for each that did not exit with status 0. Returns whether all
 * did. */
int kids_wait(struct kids *k, double limit_s);

/* A blocking TCP connection to the loopback port, with timeouts; -1 on
 * failure. */
int dial(int port);
int send_bytes(int fd, const uint8_t *p, size_t n);
int send_msg(int fd, const struct wire_msg *m);
/* The next frame from a blocking socket: 1 (in m), 0 at end of stream,
 * -1 on a timeout, an error or a malformed frame (e says which). */
int recv_msg(int fd, struct wire_msg *m, struct err *e);
/* Reads until the server closes the connection; VERDICTs may come first.
 * Returns whether it did, without anything else. */
int expect_close(int fd, const char *who);
/* The next message is an ERROR whose text has want and whose retry byte is
 * retry, then the server closes the connection. */
int expect_error(int fd, const char *want, int retry, const char *who);

struct edge_kind {
	enum proto_kind proto;
	int gamma, window;
	bool adaptive;   /* gamma is the first block's; window the most */
	bool handover;   /* a handover start: the cloud decodes first */
	bool handback;   /* a hand-back ("faster"): the cloud decodes last */
};

/* What a loopback run needs: both models, the prompts and their greedy
 * continuations, the link, and how the edges behave. */
struct rig {
	struct llama target, draft;
	struct tok tt, dt;
	struct cfg_wan wan;
	int prompts[E_NPROMPTS][E_PROMPT];
	int want[E_NPROMPTS][E_OUT];
	int port;
	struct kids k;
	double think_s;          /* edges: pause between requests */
	double retry_s;          /* edges: > 0 dial again when the cloud is
				    lost, for this long */
	double silence_s;        /* edges: the cloud silent this long while
				    awaited is lost (0: EDGE_SILENCE_S) */
	bool edge_dials;         /* edges dial themselves (else the parent
				    dials before the fork) */
	const uint8_t *secret;   /* edges' HELLO; NULL: none */
};

int rig_init(struct rig *r);
void rig_release(struct rig *r);
/* Replaces the edges' link by the one of text (a config's wan object). */
int rig_wan(struct rig *r, const char *text);

/* t_tmpdir()/name (a static buffer reused every 8 calls). */
const char *tmp_path(const char *name);

/* Forks the server on a fresh port; its stats go to serve.json. */
int start_server(struct rig *r, int max_clients, int exit_after);
/* Forks a server of o's limits, policy and secret on r->port (0: a fresh
 * one, then in r->port); its stats go to tmp_path(stats). */
int start_server_opts(struct rig *r, const struct serve_opts *o,
		      const char *stats);

/* Forks edge `tenant` (kind e_kinds[tenant % 7], prompts 2 tenant and
 * 2 tenant + 1); its log goes to edge<tenant>.json. With hold >= 0 the
 * child keeps its connection open after edge_run until hold (a pipe's read
 * end) reaches end of file. */
int start_edge(struct rig *r, uint32_t tenant, int hold_r, int hold_w);

/* Edge tenant's log (NULL when missing: a failure), and whether every
 * request's tokens are the target's greedy ones. */
json_t *check_edge_log(const struct rig *r, uint32_t tenant);
/* The counter key of a stats object, or -1. */
long long stat_of(json_t *st, const char *key);
/* serve.json's clients, requests done and protocol errors. */
void check_server(long long clients, long long requests_done,
		  long long errors);

#endif
