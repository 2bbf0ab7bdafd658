/* rundir.c: a run into an outdir. The streamed files (requests.csv, the
 * trace) are open in the temporary folder while the simulation runs; the
 * rest is written after it, and the folder is put in place last, so that
 * an error or a stop at any point leaves the target as it was. */
#include "rundir.h"

#include "jx.h"
#include "outdir.h"
#include "report.h"
#include "rt.h"
#include "sim.h"
#include "trace.h"

#include <stdlib.h>

/* Writes a file of the results from a string it then frees. */
static int put(struct od *o, const char *name, char *text, struct err *e)
{
	int rc = od_write(o, name, text, e);

	free(text);
	return rc;
}

/* Closes *f, once; -1 with e's message if the last writes failed. */
static int close_file(FILE **f, const char *name, struct err *e)
{
	int bad = *f && fclose(*f) != 0;

	*f = NULL;
	return bad ? err_set(e, "cannot write %s", name) : 0;
}

static bool stopped(const struct rundir_opts *o)
{
	return o->stop && *o->stop;
}

int rundir_write(const struct cfg *c, const char *dir,
		 const struct rundir_opts *o, struct rundir_result *r,
		 struct err *e)
{
	struct sim_opts opt = { .trace_tenants = o->trace_tenants,
				.stop = o->stop, .tick = o->tick,
				.tick_ctx = o->tick_ctx };
	struct trace tr;
	FILE *trace_f = NULL;
	struct od out = { 0 };
	struct sim s;
	bool made = false;
	double t0 = rt_now_s();
	json_t *perf;
	FILE *f;
	int rc = -1;

	*r = (struct rundir_result){ 0 };
	if (od_begin(&out, dir, "run", o->replace, e) < 0 ||
	    (o->tables && !(opt.requests_csv = od_open(&out, "requests.csv", e))) ||
	    (o->trace && !(trace_f = od_open(&out, "trace.json", e))))
		goto done;
	if (opt.requests_csv)
		rep_requests_header(opt.requests_csv);
	if (trace_f) {
		trace_begin(&tr, trace_f);
		opt.trace = &tr;
	}
	sim_init(&s, c, opt, e);
	made = true;
	if (sim_run(&s) < 0) {
		if (!stopped(o))
			err_prefix(e, "%s", c->file);
		goto done;
	}
	r->wall_s = rt_now_s() - t0;
	r->events = s.events;
	if (opt.trace)
		trace_end(opt.trace);
	if (close_file(&trace_f, "trace.json", e) < 0 ||
	    close_file(&opt.requests_csv, "requests.csv", e) < 0)
		goto done;
	r->summary = rep_summary(&s);
	if (put(&out, "summary.json", jx_dumps(r->summary), e) < 0 ||
	    put(&out, OD_MARKER, cfg_resolved(c), e) < 0)
		goto done;
	if (o->tables) {
		if (!(f = od_open(&out, "tenants.csv", e)))
			goto done;
		rep_tenants_csv(&s, f);
		if (close_file(&f, "tenants.csv", e) < 0)
			goto done;
	}
	perf = json_pack("{s:f,s:I,s:f}", "wall_s", r->wall_s, "events",
			 (json_int_t)r->events, "events_per_s",
			 r->wall_s > 0 ? (double)r->events / r->wall_s : 0);
	rc = put(&out, "perf.json", jx_dumps(perf), e);
	json_decref(perf);
	if (rc == 0 && (stopped(o) || od_commit(&out, e) < 0))
		rc = -1;
done:
	close_file(&trace_f, "trace.json", NULL);
	close_file(&opt.requests_csv, "requests.csv", NULL);
	if (made)
		sim_release(&s);
	od_abort(&out);
	if (rc < 0) {
		json_decref(r->summary);
		r->summary = NULL;
	}
	return rc;
}
