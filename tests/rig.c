/* rig.c: the loopback rig of the deployment's tests (rig.h). A child
 * process of the rig is a server or an edge forked after the models were
 * loaded (they share the parent's copy); raw clients block with
 * SOCKET_TIMEOUT_S timeouts, so a silent server fails a read instead of
 * hanging it. */
#include "rig.h"

#include "harness.h"
#include "dist.h"
#include "edge.h"
#include "jx.h"
#include "mload.h"
#include "rt.h"
#include "spec.h"
#include "mem.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

int prompt_of(const struct tok *t, const char *text, int n, int *out)
{
	int *all = xmalloc(sizeof(int) * (strlen(text) + 3));
	int got = tok_encode(t, text, 1, 0, all);

	if (got >= n)
		memcpy(out, all, sizeof(int) * (size_t)n);
	free(all);
	return got >= n ? 0 : -1;
}


/* ---- processes and sockets ------------------------------------------------ */

pid_t kid_fork(struct kids *k, const char *name)
{
	pid_t pid;

	HS_ASSERT(k->n < MAX_KIDS);
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid > 0) {
		k->pid[k->n] = pid;
		snprintf(k->name[k->n++], sizeof(k->name[0]), "%s", name);
	}
	CHECK_MSG(pid >= 0, "fork: %s", strerror(errno));
	return pid;
}

/* A failure unless status (waitpid's) is exit status 0. */
static int exited_ok(const struct kids *k, int i, int st)
{
	CHECK_MSG(WIFEXITED(st) && WEXITSTATUS(st) == 0, "%s: %s %d",
		  k->name[i], WIFEXITED(st) ? "exit status" : "signal",
		  WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
	return WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

static void kid_kill(struct kids *k, int i, double limit_s)
{
	CHECK_MSG(0, "%s: still running after %.0f s: killed", k->name[i],
		  limit_s);
	kill(k->pid[i], SIGKILL);
	waitpid(k->pid[i], NULL, 0);
	k->pid[i] = 0;
}

int kid_wait(struct kids *k, int i, double limit_s)
{
	double end = rt_now_s() + limit_s;
	int st;

	while (waitpid(k->pid[i], &st, WNOHANG) != k->pid[i]) {
		if (rt_now_s() > end) {
			kid_kill(k, i, limit_s);
			return -1;
		}
		nanosleep(&(struct timespec){ 0, 1000000 }, NULL);
	}
	k->pid[i] = 0;
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

int kids_wait(struct kids *k, double limit_s)
{
	double end = rt_now_s() + limit_s;
	int left = 0, ok = 1;

	for (int i = 0; i < k->n; i++)
		left += k->pid[i] != 0;
	while (left) {
		for (int i = 0; i < k->n; i++) {
			int st;

			if (!k->pid[i] || waitpid(k->pid[i], &st, WNOHANG) != k->pid[i])
				continue;
			ok &= exited_ok(k, i, st);
			k->pid[i] = 0;
			left--;
		}
		if (left && rt_now_s() > end) {
			for (int i = 0; i < k->n; i++)
				if (k->pid[i])
					kid_kill(k, i, limit_s);
			return 0;
		}
		nanosleep(&(struct timespec){ 0, 1000000 }, NULL);
	}
	return ok;
}

int dial(int port)
{
	struct timeval tv = { SOCKET_TIMEOUT_S, 0 };
	struct err e;
	int fd = wire_dial("127.0.0.1", port, &e);

	if (fd < 0) {
		CHECK_MSG(0, "%s", e.msg);
		return -1;
	}
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	return fd;
}

int send_bytes(int fd, const uint8_t *p, size_t n)
{
	while (n) {
		ssize_t w = send(fd, p, n, MSG_NOSIGNAL);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

int send_msg(int fd, const struct wire_msg *m)
{
	uint8_t *buf = xmalloc(wire_size(m));
	int r;

	wire_encode(m, buf);
	r = send_bytes(fd, buf, wire_size(m));
	free(buf);
	return r;
}

/* Reads n bytes: 1, 0 at end of stream before any, -1 otherwise. */
static int recv_bytes(int fd, uint8_t *p, size_t n)
{
	size_t got = 0;

	while (got < n) {
		ssize_t r = recv(fd, p + got, n - got, 0);

		if (r < 0 && errno == EINTR)
			continue;
		if (r == 0 && !got)
			return 0;
		if (r <= 0)
			return -1;
		got += (size_t)r;
	}
	return 1;
}

int recv_msg(int fd, struct wire_msg *m, struct err *e)
{
	uint8_t *buf = xmalloc(4 + WIRE_MAX_PAYLOAD);
	uint32_t len;
	int r = recv_bytes(fd, buf, 4);

	if (r == 1) {
		len = wire_get32(buf);
		if (len < 1 || len > WIRE_MAX_PAYLOAD)
			r = err_set(e, "frame of %u bytes", len);
		else if (recv_bytes(fd, buf + 4, len) != 1)
			r = err_set(e, "frame cut short");
		else if (wire_decode(buf, 4 + len, m, e) < 0)
			r = -1;
	} else if (r < 0) {
		err_set(e, "recv: %s", strerror(errno));
	}
	free(buf);
	return r;
}

int expect_close(int fd, const char *who)
{
	struct wire_msg *m = xmalloc(sizeof(*m));
	struct err e = { "" };
	int r;

	while ((r = recv_msg(fd, m, &e)) == 1 && m->type == WIRE_VERDICT)
		;
	CHECK_MSG(r == 0, "%s: not closed: %s%s", who,
		  r < 0 ? e.msg : "message type ", r < 0 ? "" :
		  m->type == WIRE_ERROR ? m->text : "other");
	free(m);
	return r == 0;
}

int expect_error(int fd, const char *want, int retry, const char *who)
{
	struct wire_msg *m = xcalloc(1, sizeof(*m));
	struct err e = { "" };
	int got = recv_msg(fd, m, &e), ok;

	ok = got == 1 && m->type == WIRE_ERROR && strstr(m->text, want) &&
	     m->retry == retry;
	CHECK_MSG(ok, "%s: %s, type %d '%s' retry %d; want an error with '%s' "
		  "retry %d", who, got == 1 ? "got" : e.msg, m->type, m->text,
		  m->retry, want, retry);
	ok = ok && expect_close(fd, who);
	free(m);
	return ok;
}

/* ---- the rig ---------------------------------------------------------------- */

static const char *const e_texts[E_NPROMPTS] = {
	"Once upon a time, there was a little girl",
	"Tom had a big red ball and a small dog",
	"The sun was hot and the birds were singing",
	"One day, a cat found a box in the garden",
	"Lily and Ben went to the park to play",
	"There was a tall tree near the old house",
	"Sam liked to eat apples with his mom",
	"A little boat sailed on the blue sea",
	"The dog ran fast to catch the ball",
	"Mia saw a big fish in the pond",
	"The little bird sang a happy song",
	"Ben found a shiny stone by the river",
	"Anna had a yellow hat and a green coat",
	"The old man gave the boy a red apple",
};
static const struct edge_kind e_kinds[] = {
	{ PROTO_SYNC, 4, 1, false, false, false },
	{ PROTO_ASYNC, 3, 3, false, true, false },
	{ PROTO_ASYNC, 4, 3, false, false, false },
	{ PROTO_ASYNC, 4, 8, true, false, false },
	{ PROTO_SYNC, 4, 1, true, true, false },
	{ PROTO_ASYNC, 4, 2, false, false, true },
	{ PROTO_SYNC, 4, 1, false, true, true },
};

int rig_init(struct rig *r)
{
	struct quant q;
	struct err e = { "" };
	json_t *w;

	memset(r, 0, sizeof(*r));
	if (!t_need_models())
		return -1;
	if (mload_spec(TARGET, "f32", &r->target, &r->tt, &q, &e) < 0) {
		CHECK_MSG(0, "%s", e.msg);
		return -1;
	}
	if (mload_spec(DRAFT, "w4a16", &r->draft, &r->dt, &q, &e) < 0) {
		CHECK_MSG(0, "%s", e.msg);
		llama_release(&r->target);
		tok_release(&r->tt);
		return -1;
	}
	w = json_loads(E_WAN, 0, NULL);
	CHECK(w && cfg_wan_read("wan", w, &r->wan, &e) == 0);
	json_decref(w);
	for (int i = 0; i < E_NPROMPTS; i++) {
		CHECK_MSG(prompt_of(&r->tt, e_texts[i], E_PROMPT, r->prompts[i]) == 0,
			  "'%s': fewer than %d tokens", e_texts[i], E_PROMPT);
		spec_greedy(&r->target, r->prompts[i], E_PROMPT, E_OUT, r->want[i]);
	}
	return 0;
}

void rig_release(struct rig *r)
{
	cfg_wan_release(&r->wan);
	llama_release(&r->target);
	llama_release(&r->draft);
	tok_release(&r->tt);
	tok_release(&r->dt);
}

int rig_wan(struct rig *r, const char *text)
{
	json_t *w = json_loads(text, 0, NULL);
	struct err e = { "" };
	int ok;

	cfg_wan_release(&r->wan);
	ok = w && cfg_wan_read("wan", w, &r->wan, &e) == 0;
	CHECK_MSG(ok, "wan %s: %s", text, e.msg);
	json_decref(w);
	return ok ? 0 : -1;
}

const char *tmp_path(const char *name)
{
	static char p[8][600];
	static int k;
	char *s = p[k++ % 8];

	snprintf(s, sizeof(p[0]), "%s/%s", t_tmpdir(), name);
	return s;
}

int start_server_opts(struct rig *r, const struct serve_opts *tmpl,
		      const char *stats_name)
{
	struct err e = { "" };
	const char *stats = tmp_path(stats_name);
	int fd = serve_listen("127.0.0.1", &r->port, &e);
	pid_t pid;

	if (fd < 0) {
		CHECK_MSG(0, "%s", e.msg);
		return -1;
	}
	pid = kid_fork(&r->k, stats_name);
	if (pid == 0) {
		struct serve_opts o = *tmpl;
		json_t *st;

		o.m = &r->target;
		o.tokenizer = tok_fingerprint(&r->tt);
		o.listen_fd = fd;
		o.t0_s = rt_now_s();
		rt_signals_catch();
		st = serve_run(&o, &e);
		int ok = st && jx_save(stats, st, &e) == 0;

		if (!ok)
			fprintf(stderr, "server: %s\n", e.msg);
		json_decref(st);
		_exit(ok ? 0 : 1);
	}
	close(fd);
	return pid > 0 ? 0 : -1;
}

int start_server(struct rig *r, int max_clients, int exit_after)
{
	struct serve_opts o = {
		.policy = SCHED_CONTINUOUS, .budget = E_BUDGET, .chunk = E_CHUNK,
		.max_clients = max_clients, .exit_after = exit_after,
	};

	r->port = 0;
	return start_server_opts(r, &o, "serve.json");
}

int start_edge(struct rig *r, uint32_t tenant, int hold_r, int hold_w)
{
	const struct edge_kind *ek = &e_kinds[tenant % NELEM(e_kinds)];
	char name[32];
	const char *log_path;
	int fd = r->edge_dials ? -1 : dial(r->port);
	pid_t pid;

	HS_ASSERT(2 * (int)tenant + E_REQUESTS <= E_NPROMPTS);
	if (fd < 0 && !r->edge_dials)
		return -1;
	snprintf(name, sizeof(name), "edge%u.json", tenant);
	log_path = tmp_path(name);
	snprintf(name, sizeof(name), "edge %u", tenant);
	pid = kid_fork(&r->k, name);
	if (pid == 0) {
		struct edge_opts o = {
			.m = &r->draft, .tk = NULL, .fd = fd, .tenant = tenant,
			.tokenizer = tok_fingerprint(&r->dt),
			.host = r->retry_s > 0 ? "127.0.0.1" : NULL,
			.port = r->port, .retry_s = r->retry_s,
			.silence_s = r->silence_s > 0 ? r->silence_s :
				     EDGE_SILENCE_S,
			.secret = r->secret,
			.proto = ek->proto, .gamma = ek->gamma,
			.window = ek->window, .handover = ek->handover,
			.handback = ek->handback,
			.adapt = { ek->adaptive, 1, 8, 0.2 },
			.wan = &r->wan, .seed = 1 + tenant,
			.prompts = r->prompts[2 * tenant], .prompt_n = E_PROMPT,
			.out_n = E_OUT, .requests = E_REQUESTS,
			.think_s = dist_constant(r->think_s),
			.start_s = dist_constant(0),
			.t0_s = rt_now_s(), .text = NULL,
		};
		struct err e = { "" };
		int keep = hold_r >= 0 && fd >= 0 ? dup(fd) : -1, ok;
		json_t *log;
		char c;

		if (hold_w >= 0)
			close(hold_w);
		log = edge_run(&o, &e);
		ok = log && jx_save(log_path, log, &e) == 0;
		if (!ok)
			fprintf(stderr, "edge %u: %s\n", tenant, e.msg);
		json_decref(log);
		if (ok && hold_r >= 0)
			while (read(hold_r, &c, 1) > 0)
				;
		if (keep >= 0)
			close(keep);
		_exit(ok ? 0 : 1);
	}
	if (fd >= 0)
		close(fd);
	return pid > 0 ? 0 : -1;
}

json_t *check_edge_log(const struct rig *r, uint32_t tenant)
{
	char name[32];
	struct err e = { "" };
	json_t *log, *reqs;

	snprintf(name, sizeof(name), "edge%u.json", tenant);
	log = jx_load(tmp_path(name), &e);
	if (!log) {
		CHECK_MSG(0, "edge %u: no log: %s", tenant, e.msg);
		return NULL;
	}
	reqs = json_object_get(log, "requests");
	CHECK_MSG(json_array_size(reqs) == E_REQUESTS, "edge %u: %zu requests",
		  tenant, json_array_size(reqs));
	for (size_t i = 0; i < json_array_size(reqs) && i < E_REQUESTS; i++) {
		json_t *toks = json_object_get(json_array_get(reqs, i), "tokens");
		const int *want = r->want[2 * tenant + i];
		int same = json_array_size(toks) == E_OUT;

		for (int j = 0; same && j < E_OUT; j++)
			same = json_integer_value(json_array_get(toks, (size_t)j)) ==
			       want[j];
		CHECK_MSG(same, "edge %u request %zu: not the target's greedy "
			  "output", tenant, i);
	}
	CHECK_MSG(json_integer_value(json_object_get(log, "drafted")) ==
		  json_integer_value(json_object_get(log, "accepted")) +
		  json_integer_value(json_object_get(log, "wasted")),
		  "edge %u: drafted != accepted + wasted", tenant);
	/* a hand-back leaves the cloud a token at least (whether it is
	 * taken depends on the server's load: loopback_handback) */
	CHECK_MSG(stat_of(log, "handbacks") <= E_REQUESTS &&
		  stat_of(log, "back_tokens") >= stat_of(log, "handbacks") &&
		  (e_kinds[tenant % NELEM(e_kinds)].handback ||
		   stat_of(log, "handbacks") == 0), "edge %u: %lld hand-backs, "
		  "%lld tokens after them", tenant, stat_of(log, "handbacks"),
		  stat_of(log, "back_tokens"));
	/* a handover start's first tokens are the cloud's */
	if (e_kinds[tenant % NELEM(e_kinds)].handover)
		CHECK_MSG(json_integer_value(json_object_get(log,
			  "cloud_tokens")) >= E_REQUESTS, "edge %u: %lld tokens "
			  "from the cloud in a handover start", tenant,
			  (long long)json_integer_value(json_object_get(log,
							"cloud_tokens")));
	return log;
}

long long stat_of(json_t *st, const char *key)
{
	json_t *v = json_object_get(st, key);

	return json_is_integer(v) ? json_integer_value(v) : -1;
}

void check_server(long long clients, long long requests_done,
		  long long errors)
{
	struct err e = { "" };
	json_t *st = jx_load(tmp_path("serve.json"), &e);

	if (!st) {
		CHECK_MSG(0, "server: no stats: %s", e.msg);
		return;
	}
	CHECK_MSG(stat_of(st, "clients") == clients, "clients %lld, want %lld",
		  stat_of(st, "clients"), clients);
	CHECK_MSG(stat_of(st, "requests_done") == requests_done,
		  "requests_done %lld, want %lld", stat_of(st, "requests_done"),
		  requests_done);
	CHECK_MSG(stat_of(st, "protocol_errors") == errors,
		  "protocol_errors %lld, want %lld", stat_of(st, "protocol_errors"),
		  errors);
	json_decref(st);
}
