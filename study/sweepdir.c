/* sweepdir.c: a sweep's results folder (sweepdir.h).
 *
 * A task is a run: a point and a seed, numbered point-major (task k is
 * point k / n_seeds, seed k mod n_seeds). A run's directory is written
 * whole (outdir.h) and is the only record of it: a run whose directory
 * exists is done, which is what resume relies on, and the table is read
 * back from the summaries once every worker has exited. Invariant:
 * DIR/sweep.csv exists only when every run of DIR/sweep.json is done.
 * While a sweep runs, rank 0 holds a lock on DIR (flock), so that a second
 * sweep of DIR refuses instead of running the same runs beside it. */
#define _DEFAULT_SOURCE /* flock */
#include "sweepdir.h"

#include "cfg.h"
#include "farm.h"
#include "fs.h"
#include "jx.h"
#include "mem.h"
#include "outdir.h"
#include "rundir.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

struct job {
	const struct sweep *s;
	const char *dir;
};

/* One run: its config, the simulation, its directory written whole. */
static int run_one(const struct sweep *s, const char *dir, size_t point,
		   size_t seed_i, struct err *e)
{
	char *out = sweep_run_dir(s, dir, point, seed_i);
	size_t n;
	char **sets = sweep_sets(s, point, s->seeds[seed_i], &n);
	struct rundir_opts o = { .replace = true }; /* its own run folders */
	struct rundir_result r;
	struct cfg c;
	int rc;

	rc = cfg_load_from(&c, s->base, (const char *const *)sets, n, NULL,
			   e);
	sweep_sets_free(sets, n);
	if (rc == 0) {
		rc = rundir_write(&c, out, &o, &r, e);
		json_decref(r.summary);
		cfg_release(&c);
	}
	if (rc < 0)
		err_prefix(e, "%s", out);
	free(out);
	return rc;
}

static int run_task(void *ctx, size_t k, struct err *e)
{
	const struct job *j = ctx;

	return run_one(j->s, j->dir, k / j->s->n_seeds, k % j->s->n_seeds, e);
}

static size_t task_point(void *ctx, size_t k)
{
	return k / ((const struct job *)ctx)->s->n_seeds;
}

/* Removes what killed runs left: the hidden temporary directories beside
 * the run directories, and temporary files beside sweep.json, each the
 * tool's and its process gone (od_is_stale: a live sweep's, or a user's
 * folder of such a name, stays). */
static void clean_litter(const char *dir)
{
	size_t n = strlen(dir) + 300;
	char *p = xmalloc(n), *q = xmalloc(n + 300);
	DIR *d, *pd;
	struct dirent *de, *pe;

	if ((d = opendir(dir))) {
		while ((de = readdir(d))) {
			snprintf(p, n, "%s/%s", dir, de->d_name);
			if (od_is_stale(p, de->d_name))
				od_rm_tree(p);
		}
		closedir(d);
	}
	snprintf(p, n, "%s/points", dir);
	if ((d = opendir(p))) {
		while ((de = readdir(d))) {
			if (de->d_name[0] == '.')
				continue;
			snprintf(q, n + 300, "%s/points/%s", dir, de->d_name);
			if (!(pd = opendir(q)))
				continue;
			while ((pe = readdir(pd))) {
				snprintf(q, n + 300, "%s/points/%s/%s", dir,
					 de->d_name, pe->d_name);
				if (od_is_stale(q, pe->d_name))
					od_rm_tree(q);
			}
			closedir(pd);
		}
		closedir(d);
	}
	free(p);
	free(q);
}

static bool run_done(const struct sweep *s, const char *dir, size_t point,
		     size_t seed_i)
{
	char *run = sweep_run_dir(s, dir, point, seed_i);
	size_t n = strlen(run) + 64;
	char *marker = xmalloc(n);
	bool yes;

	snprintf(marker, n, "%s/%s", run, OD_MARKER);
	yes = access(marker, F_OK) == 0;
	free(marker);
	free(run);
	return yes;
}

/* A finished run is kept only if the sweep still gives it the same
 * config, compared as JSON values (a resolved config written with other
 * digits for the same numbers is the same): else the sweep file or its
 * base changed since it ran; and only if its summary reads, which the
 * table is made of (checked before anything is removed: a resume that
 * stops here changes nothing). */
static int check_kept(const struct sweep *s, const char *dir, size_t point,
		      size_t seed_i, struct err *e)
{
	char *run = sweep_run_dir(s, dir, point, seed_i);
	size_t n = strlen(run) + 64;
	char *path = xmalloc(n), **sets;
	struct cfg c;
	size_t n_sets;
	int rc;

	snprintf(path, n, "%s/%s", run, OD_MARKER);
	sets = sweep_sets(s, point, s->seeds[seed_i], &n_sets);
	rc = cfg_load_from(&c, s->base, (const char *const *)sets, n_sets,
			   NULL, e);
	sweep_sets_free(sets, n_sets);
	if (rc == 0) {
		json_t *had = json_load_file(path, JSON_DECODE_ANY, NULL);

		if (!had || !json_equal(had, c.doc))
			rc = err_set(e, "'%s' was run with another config than "
				     "the sweep now gives it (the sweep file or "
				     "its base changed): remove '%s' or choose "
				     "another -o", run, dir);
		json_decref(had);
		cfg_release(&c);
	}
	if (rc == 0) {
		json_t *sum;

		snprintf(path, n, "%s/summary.json", run);
		if (!(sum = jx_load(path, e))) {
			struct err why = *e; /* e's text is err_set's argument */

			rc = err_set(e, "%s: remove '%s' to run it again",
				     why.msg, run);
		} else if (!json_is_object(sum)) {
			rc = err_set(e, "%s: expected a run's summary, a JSON "
				     "object: remove '%s' to run it again", path,
				     run);
		}
		json_decref(sum);
	}
	free(path);
	free(run);
	return rc;
}

/* What a sweep writes at its folder's top: its resolved file, its table,
 * its runs and their figures (and temporaries, which od_check_own knows) */
static const char *const sweep_top[] = { "sweep.json", "sweep.csv", "points",
					 "plots", NULL };

/* Whether name is a prefix and then digits alone ("seed-12", "3") */
static bool numbered(const char *name, const char *prefix)
{
	size_t n = strlen(prefix);

	return !strncmp(name, prefix, n) && name[n] &&
	       strspn(name + n, "0123456789") == strlen(name + n);
}

/* e's message for path in the sweep folder dir, not the tool's; doing:
 * what is refused ("resume in", "replace") */
static int stranger(const char *path, const char *doing, const char *dir,
		    struct err *e)
{
	return err_set(e, "'%s' was not written by hybridspec: refusing to "
		       "%s '%s' (move it out, or name another folder)", path,
		       doing, dir);
}

/* Whether dir/points holds only a sweep's layout: points/N, each holding
 * runs seed-K (results folders: never empty, a run is renamed in whole)
 * and temporaries; an empty folder of the user's there is found, not
 * removed with the rest. 0, or -1 with e's message naming it (doing: as
 * stranger's). */
static int own_points(const char *dir, const char *doing, struct err *e)
{
	/* dir/points/N/seed-K/.manifest: two names of at most NAME_MAX */
	size_t n = strlen(dir) + 600;
	char *p = xmalloc(n), *q = xmalloc(n), *mark = xmalloc(n);
	DIR *d, *pd;
	struct dirent *de, *pe;
	int rc = 0;

	snprintf(p, n, "%s/points", dir);
	if (!(d = opendir(p)))
		goto out;
	while (rc == 0 && (de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		snprintf(q, n, "%s/points/%s", dir, de->d_name);
		if (od_is_litter(q, de->d_name))
			continue;
		if (!numbered(de->d_name, "") || !(pd = opendir(q))) {
			rc = stranger(q, doing, dir, e);
			break;
		}
		while (rc == 0 && (pe = readdir(pd))) {
			size_t at;

			if (!strcmp(pe->d_name, ".") || !strcmp(pe->d_name, ".."))
				continue;
			at = (size_t)snprintf(mark, n, "%s/%s", q,
					      pe->d_name);
			if (od_is_litter(mark, pe->d_name))
				continue;
			strcat(mark, "/" OD_MANIFEST);
			if (!numbered(pe->d_name, "seed-") ||
			    access(mark, F_OK) != 0) {
				mark[at] = '\0';
				rc = stranger(mark, doing, dir, e);
			}
		}
		closedir(pd);
	}
	closedir(d);
out:
	free(p);
	free(q);
	free(mark);
	return rc;
}

/* Whether dir, a folder with a sweep.json, is a sweep's this tool wrote:
 * its sweep.json as sweep_resolved writes it (the base and the points),
 * and nothing in it but a sweep's files, its runs' and its plots' (a
 * file or folder of the user's is not the resume's to write beside, nor
 * the overwrite's to remove: a sweep file of the user's named sweep.json
 * among them). doing: what is refused ("resume in", "replace"). */
static int own_sweep(const char *dir, const char *doing, struct err *e)
{
	size_t n = strlen(dir) + 16;
	char *path = xmalloc(n);
	json_t *doc;
	int rc = 0;

	snprintf(path, n, "%s/sweep.json", dir);
	if (!(doc = jx_load(path, e)))
		rc = err_prefix(e, "refusing to %s '%s'", doing, dir);
	else if (!json_is_string(json_object_get(doc, "base")) ||
		 !json_is_array(json_object_get(doc, "points")))
		rc = err_set(e, "'%s' is not a sweep.json hybridspec wrote (it "
			     "has no \"base\" and \"points\"): refusing to "
			     "%s '%s'", path, doing, dir);
	json_decref(doc);
	free(path);
	return rc < 0 || own_points(dir, doing, e) < 0 ? -1
	       : od_check_own(dir, sweep_top, e);
}

/* Readies dir: new (or empty), or with --resume a sweep's directory whose
 * finished runs still match, or with --overwrite a sweep's directory
 * emptied. Writes sweep.json. */
static int prepare(const struct sweep *s, const char *dir, bool resume,
		   bool replace, struct err *e)
{
	size_t n = strlen(dir) + 64;
	char *path = xmalloc(n), *text;
	bool empty = true, has_sweep;
	DIR *d;
	struct dirent *de;
	int rc = 0;

	if ((d = opendir(dir))) {
		while ((de = readdir(d)))
			if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
				empty = false;
		closedir(d);
	} else if (errno != ENOENT) {
		rc = err_set(e, "cannot use '%s' as the results directory: %s",
			     dir, strerror(errno));
		goto out;
	}
	snprintf(path, n, "%s/sweep.json", dir);
	has_sweep = access(path, F_OK) == 0;
	if (!empty && !has_sweep) {
		rc = err_set(e, "'%s' exists and holds no sweep.json (it is not "
			     "a sweep's folder): refusing to write into it; "
			     "choose another -o", dir);
		goto out;
	}
	/* every entry at the top a sweep's, and every file below one a
	 * run's or a plot's manifest lists: checked before "add --resume" is
	 * offered, as before anything is removed or written */
	if (!empty && (rc = own_sweep(dir, replace ? "replace" : resume ?
				      "resume in" : "write into", e)) < 0)
		goto out;
	if (!empty && replace) {
		od_rm_tree(dir);
		empty = true;
	}
	if (!empty && !resume) {
		rc = err_set(e, "'%s' exists and is not empty: add --resume to "
			     "finish the sweep in it, --overwrite to start it "
			     "over, or choose another -o", dir);
		goto out;
	}
	if (!empty) {
		for (size_t p = 0; p < s->n_points && rc == 0; p++)
			for (size_t k = 0; k < s->n_seeds && rc == 0; k++)
				if (run_done(s, dir, p, k))
					rc = check_kept(s, dir, p, k, e);
		if (rc < 0)
			goto out;
		clean_litter(dir);
		snprintf(path, n, "%s/sweep.csv", dir);
		remove(path);
	}
	if ((rc = fs_mkdirs(dir, e)) < 0)
		goto out;
	text = sweep_resolved(s);
	snprintf(path, n, "%s/sweep.json", dir);
	rc = fs_write_atomic(path, text, e);
	free(text);
out:
	free(path);
	return rc;
}

static bool task_done(void *ctx, size_t k)
{
	const struct job *j = ctx;

	return run_done(j->s, j->dir, k / j->s->n_seeds, k % j->s->n_seeds);
}

/* dir locked for this process: its descriptor (closing it, and the
 * workers forked with it exiting, ends the lock); -1 where dir is not
 * there; -2 with e's message where a sweep running now holds it */
static int lock_dir(const char *dir, struct err *e)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY);

	if (fd < 0)
		return -1;
	if (flock(fd, LOCK_EX | LOCK_NB) == 0)
		return fd;
	close(fd);
	err_set(e, "'%s' is in use by a sweep running now: wait for it to "
		"end, or choose another -o", dir);
	return -2;
}

/* Readies dir (prepare) under its lock, held on what is there after (a
 * folder --overwrite made anew is locked in turn): the lock's descriptor
 * in *lock (-1: none), or -1 with e's message */
static int prepare_locked(const struct sweep *s, const struct sweepdir_opts *o,
			  int *lock, struct err *e)
{
	int rc;

	if ((*lock = lock_dir(o->dir, e)) == -2)
		return -1;
	rc = prepare(s, o->dir, o->resume, o->replace, e);
	if (*lock >= 0 && (rc < 0 || o->replace)) {
		close(*lock); /* after --overwrite the folder is another */
		*lock = -1;
	}
	if (rc == 0 && *lock < 0 && (*lock = lock_dir(o->dir, e)) == -2)
		rc = -1;
	return rc;
}

void sweepdir_run(const struct sweep *s, const struct sweepdir_opts *o,
		  struct sweepdir_result *r, struct err *e)
{
	struct job j = { s, o->dir };
	struct farm f = {
		.n_tasks = s->n_points * s->n_seeds, .ctx = &j, .run = run_task,
		.done = task_done, .point = task_point, .n_points = s->n_points,
		.label = o->size > 1 ? "rank 0" : s->name, .what = "runs",
		.jobs = o->jobs, .progress = o->progress, .quiet = o->quiet,
		.rank = o->rank, .size = o->size,
	};
	struct farm_result fr;
	size_t counts[2];
	int lock = -1;

	*r = (struct sweepdir_result){ 0 };
	if (o->rank == 0 && prepare_locked(s, o, &lock, e) < 0)
		r->status = FARM_BAD;
	farm_mpi_share(&r->status, e->msg, sizeof(e->msg));
	if (r->status)
		goto out;
	farm_run(&f, &fr);
	if (fr.status) {
		clean_litter(o->dir);
		if (fr.status < 128)
			err_set(e, "%s", fr.msg[0] ? fr.msg : "a run failed");
	}
	r->status = farm_mpi_max(fr.status);
	counts[0] = fr.done;
	counts[1] = fr.kept;
	farm_mpi_sum(counts, 2);
	r->runs = counts[0];
	r->kept = counts[1];
	r->workers = o->size > 1 ? o->size : fr.jobs;
	if (r->status == 0 && o->rank == 0 &&
	    sweep_csv(s, o->dir, &r->empty, e) < 0)
		r->status = FARM_BAD;
out:
	if (lock >= 0)
		close(lock);
}
