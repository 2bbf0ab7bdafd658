/* test_cli.c: the binary's exit status, messages and output directories. */
#include "harness.h"
#include "fs.h"
#include "jx.h"
#include "kern.h"

#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <ctype.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static char repo[PATH_MAX];

static const char *small(void)
{
	static char p[PATH_MAX + 64];

	if (!repo[0] && !getcwd(repo, sizeof(repo)))
		abort();
	snprintf(p, sizeof(p), "%s/tests/data/small.json", repo);
	return p;
}

struct bad_case {
	const char *what, *file_text, *extra, *want;
};

/* Every class of bad config: exit status 2, the message, no results. */
static void bad_configs(void)
{
	static const struct bad_case cases[] = {
		{ "syntax", "{\"seed\": 1,\n \"tenants\": [}\n", "",
		  "c.json:2:14: invalid JSON" },
		{ "unknown key", NULL, "--set /cloud/polcy=slo",
		  "/cloud/polcy: unknown key \"polcy\"" },
		{ "wrong type", NULL, "--set /tenants/0/count='\"three\"'",
		  "/tenants/0/count: expected an integer in [1, 100000000], "
		  "got \"three\"" },
		{ "out of range", NULL, "--set /tenants/0/acceptance/alpha=-0.1",
		  "/tenants/0/acceptance/alpha: expected a number in [0, 1], "
		  "got -0.1" },
		{ "missing file", "", "MISSING",
		  "nowhere.json: cannot read: No such file or directory" },
		{ "unreadable samples", NULL,
		  "--set '/tenants/0/wan/rtt_s={\"dist\":\"empirical\","
		  "\"file\":\"rtt.txt\"}'",
		  "rtt.txt:2: expected a number > 0, got \"-0.05\"" },
		{ "missing samples", NULL,
		  "--set '/tenants/0/wan/rtt_s={\"dist\":\"empirical\","
		  "\"file\":\"absent.txt\"}'",
		  "/tenants/0/wan/rtt_s: cannot read samples file" },
	};
	char out[4096], args[1024], cfg_text[8192];
	FILE *f = fopen(small(), "r");
	size_t n = fread(cfg_text, 1, sizeof(cfg_text) - 1, f);

	fclose(f);
	cfg_text[n] = '\0';
	t_write("rtt.txt", "0.05\n-0.05\n");
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct bad_case *c = &cases[i];
		int rc;

		t_write("c.json", c->file_text && *c->file_text ? c->file_text
								 : cfg_text);
		for (int run = 0; run < 2; run++) {
			snprintf(args, sizeof(args), "%s %s -o out %s",
				 run ? "run" : "config",
				 !strcmp(c->extra, "MISSING") ? "nowhere.json"
							      : "c.json",
				 !strcmp(c->extra, "MISSING") ? "" : c->extra);
			rc = t_run(args, out, sizeof(out));
			CHECK_MSG(rc == 2, "%s: exit status %d, want 2", args, rc);
			CHECK_MSG(strstr(out, c->want) != NULL, "%s: output "
				  "\"%s\" lacks \"%s\"", args, out, c->want);
			CHECK_MSG(!strncmp(out, "hybridspec: ", 12), "%s: \"%s\"",
				  args, out);
			CHECK_MSG(!t_exists("out"), "%s: left a results directory",
				  args);
		}
	}
	/* a name longer than a folder's: refused before the run, a config's
	 * by its pointer, a folder's by its path */
	{
		char name[301], la[PATH_MAX + 512];

		memset(name, 'n', 300);
		name[300] = '\0';
		snprintf(la, sizeof(la), "run c.json --set '/name=\"%s\"'", name);
		CHECK_MSG(t_run(la, out, sizeof(out)) == 2 &&
			  strstr(out, "/name: expected a name for a results "
				 "folder: not empty, \".\" or \"..\", at most 255 "
				 "bytes") && !t_exists("results"), "%s", out);
		snprintf(la, sizeof(la), "run c.json -o out/%s", name);
		CHECK_MSG(t_run(la, out, sizeof(out)) == 2 &&
			  strstr(out, "a folder name of 300 bytes, more than the "
				 "255 a file system takes") && !t_exists("out"),
			  "%s", out);
	}
	/* another command's file: its error, then which command reads it */
	{
		static const struct {
			const char *cmd, *file, *its;
		} wrong[] = {
			{ "run", "configs/plan/phones.json", "phones.json' is a "
			  "plan file: run it with hybridspec plan /" },
			{ "sweep", "tests/data/small.json", "small.json' is a "
			  "config: run it with hybridspec run /" },
			{ "plan", "configs/sweeps/itl-vs-rtt.json", "itl-vs-rtt.json' "
			  "is a sweep file: run it with hybridspec sweep /" },
		};
		char wa[PATH_MAX + 128];

		for (size_t i = 0; i < sizeof(wrong) / sizeof(wrong[0]); i++) {
			snprintf(wa, sizeof(wa), "%s %s/%s -o out", wrong[i].cmd,
				 repo, wrong[i].file);
			CHECK_MSG(t_run(wa, out, sizeof(out)) == 2 &&
				  strstr(out, wrong[i].its) && !t_exists("out"),
				  "%s: %s", wa, out);
		}
	}
}

/* A long run shows its progress with --progress (stderr no terminal
 * here): a line once 65536 events are done, then a second apart; with
 * --quiet it is refused. */
static void run_progress(void)
{
	char out[8192], args[PATH_MAX + 256];

	if (!repo[0] && !getcwd(repo, sizeof(repo)))
		abort();
	snprintf(args, sizeof(args), "run %s/configs/bench/scale-100k.json "
		 "--set /horizon_s=10 -o p --quiet --progress", repo);
	CHECK_MSG(t_run(args, out, sizeof(out)) == 2 &&
		  strstr(out, "--progress and --quiet cannot be given together"),
		  "%s", out);
	snprintf(args, sizeof(args), "run %s/configs/bench/scale-100k.json "
		 "--set /horizon_s=10 -o p --progress", repo);
	CHECK_MSG(t_run(args, out, sizeof(out)) == 0 &&
		  strstr(out, "run: at ") && strstr(out, " requests done, ") &&
		  strstr(out, " s elapsed\n"), "%s", out);
}

/* A warm-up the run never leaves is a warning, the run done (the warning,
 * the last of its text without a newline, had crashed the printer). */
static void run_warmup_outlasts(void)
{
	char out[8192], args[PATH_MAX + 128];

	snprintf(args, sizeof(args), "run %s -o w --set /warmup_s=1e9",
		 small());
	CHECK_MSG(t_run(args, out, sizeof(out)) == 0 &&
		  strstr(out, "hybridspec run: warning: /warmup_s: 1e+09 s "
			 "outlasts the run (") &&
		  strstr(out, "): nothing was measured\n") && t_exists("w"),
		  "%s", out);
}

/* Rate tables whose period and segment ends are no exact doubles (0.3,
 * 0.07): a walk that set its time to a segment's end, rounded a hair
 * short, found the same segment again for ever (it hung, deaf to
 * signals); rare rates, so arrivals come far apart, many periods on. */
static void rate_tables_run(void)
{
	static const char *const tables[] = {
		"{\"at_s\": [0, 0.1], \"per_s\": [1e-6, 0], \"period_s\": 0.3}",
		"{\"at_s\": [0, 0.07], \"per_s\": [1e-5, 0], \"period_s\": 0.7}",
		"{\"at_s\": [0, 0.01, 0.02], \"per_s\": [0, 1e-6, 0], "
		"\"period_s\": 0.03}",
	};
	char out[4096], args[PATH_MAX + 512];

	for (size_t i = 0; i < sizeof(tables) / sizeof(tables[0]); i++) {
		snprintf(args, sizeof(args), "run %s -o rt%zu --quiet --set "
			 "'/tenants/0/workload={\"arrival\": \"poisson\", "
			 "\"requests\": 50, \"rate_per_s\": %s, "
			 "\"prompt_tokens\": 64, \"output_tokens\": 8}'",
			 small(), i, tables[i]);
		CHECK_MSG(t_run(args, out, sizeof(out)) == 0, "%s: %s",
			  tables[i], out);
	}
}

/* What appears at -o while a run writes (a user's folder and file, or
 * another run's results) is checked again before the results are put in
 * place: kept, the run refused (it had been removed unseen); and -o is
 * never a symbolic link (it had been replaced by a folder) nor "." */
static void rechecked_at_commit(void)
{
	const char *bin = getenv("HYBRIDSPEC_BIN");
	char out[4096], cmd[3 * PATH_MAX], *rc_text, *notes;
	int rc;

	small(); /* sets repo */
	snprintf(cmd, sizeof(cmd), "cd '%s' && { '%s' run '%s/configs/bench/"
		 "scale-100k.json' -o out -q --set /tenants/0/workload/"
		 "requests=2 2>err & p=$!; sleep 0.5; mkdir out && echo mine > "
		 "out/notes.txt && : > made; wait $p; echo $? > rc; }", t_tmpdir(),
		 bin ? bin : "build/hybridspec", repo);
	CHECK(system(cmd) == 0);
	rc_text = t_slurp("rc");
	rc = rc_text ? atoi(rc_text) : -1;
	free(rc_text);
	notes = t_slurp("out/notes.txt");
	if (!t_exists("made")) {
		printf("    note: the run ended before the folder was made; the "
		       "check is not exercised\n");
	} else {
		char *err = t_slurp("err");

		CHECK_MSG(rc == 2 && err && strstr(err, "'out' appeared while "
						   "hybridspec run wrote its "
						   "results"), "%d: %s", rc,
			  err ? err : "");
		CHECK(notes && !strcmp(notes, "mine\n"));
		free(err);
	}
	free(notes);
	CHECK(mkdir(strcat(strcpy(cmd, t_tmpdir()), "/real"), 0777) == 0);
	CHECK(symlink("real", strcat(strcpy(cmd, t_tmpdir()), "/link")) == 0);
	snprintf(cmd, sizeof(cmd), "config %s -o link", small());
	CHECK_MSG(t_run(cmd, out, sizeof(out)) == 2 &&
		  strstr(out, "'link' is a symbolic link"), "%s", out);
	snprintf(cmd, sizeof(cmd), "%s/link", t_tmpdir());
	{
		struct stat st;

		CHECK(lstat(cmd, &st) == 0 && S_ISLNK(st.st_mode));
	}
	/* a file output's link neither (a profile's had become a file) */
	t_write("real/p.csv", "");
	CHECK(symlink("real/p.csv", strcat(strcpy(cmd, t_tmpdir()),
					   "/p.csv")) == 0);
	CHECK_MSG(t_run("gpu check -q -o p.csv", out, sizeof(out)) == 2 &&
		  strstr(out, "'p.csv' is a symbolic link"), "%s", out);
	snprintf(cmd, sizeof(cmd), "config %s -o real/.", small());
	CHECK_MSG(t_run(cmd, out, sizeof(out)) == 2 &&
		  strstr(out, "'real/.' is a folder's own name"), "%s", out);
}

/* A run killed outright (SIGKILL) leaves its temporary beside the folder:
 * the next run of that folder removes it once its process is gone, and an
 * empty one (killed between its mkdir and its mark) or one holding its
 * manifest and not its mark (killed as it committed); it leaves a live
 * process's, another folder's, a name not of the form, and a folder of the
 * form the tool did not make (no mark: it had removed a user's
 * ".k.old-PID/notes.txt") */
static void removes_stale_temporary(void)
{
	char out[4096], args[2 * PATH_MAX], dead[64], empty[PATH_MAX],
		listed[64], keep[5][64];
	long pid = t_dead_pid();

	snprintf(empty, sizeof(empty), "%s/.k.tmp-%ld", t_tmpdir(),
		 t_dead_pid());
	CHECK(mkdir(empty, 0777) == 0);
	snprintf(listed, sizeof(listed), ".k.tmp-%ld", t_dead_pid());
	snprintf(args, sizeof(args), "%s/%s", t_tmpdir(), listed);
	CHECK(mkdir(args, 0777) == 0);
	snprintf(args, sizeof(args), "%s/.hybridspec-files", listed);
	t_write(args, "#kind config\nx\n");
	snprintf(args, sizeof(args), "%s/x", listed);
	t_write(args, "what the killed run wrote");
	snprintf(dead, sizeof(dead), ".k.tmp-%ld", pid);
	snprintf(keep[0], sizeof(keep[0]), ".k.tmp-%ld", (long)getpid());
	snprintf(keep[1], sizeof(keep[1]), ".kk.tmp-%ld", pid);
	snprintf(keep[2], sizeof(keep[2]), ".k.tmp-%ldx", pid);
	snprintf(keep[3], sizeof(keep[3]), "k.tmp-%ld", pid);
	snprintf(keep[4], sizeof(keep[4]), ".k.old-%ld", pid);
	for (int i = -1; i < 5; i++) {
		char dir[PATH_MAX + 128];

		snprintf(dir, sizeof(dir), "%s/%s", t_tmpdir(), i < 0 ? dead : keep[i]);
		CHECK(mkdir(dir, 0777) == 0);
		snprintf(args, sizeof(args), "%s/%s", i < 0 ? dead : keep[i],
			 i < 0 ? ".hybridspec-tmp" : "notes.txt");
		t_write(args, "");
	}
	snprintf(args, sizeof(args), "%s/x", dead);
	t_write(args, "what the killed run wrote");
	snprintf(args, sizeof(args), "config %s -o k", small());
	CHECK_MSG(t_run(args, out, sizeof(out)) == 0, "%s", out);
	CHECK(t_exists("k/config.resolved.json") && !t_exists(dead));
	CHECK_MSG(!fs_is_dir(empty), "%s left", empty);
	CHECK_MSG(!t_exists(listed), "%s left", listed);
	CHECK(!t_exists("k/.hybridspec-tmp")); /* the mark goes at the end */
	for (int i = 0; i < 5; i++)
		CHECK_MSG(t_exists(keep[i]), "%s", keep[i]);
}

static void writes_resolved(void)
{
	char out[65536], args[2 * PATH_MAX];
	json_t *v;

	snprintf(args, sizeof(args), "config %s --set /seed=3 -o res", small());
	CHECK(t_run(args, out, sizeof(out)) == 0);
	CHECK(t_exists("res/config.resolved.json"));
	/* a second run refuses to replace them unless asked */
	CHECK(t_run(args, out, sizeof(out)) == 2 &&
	      strstr(out, "'res' holds results already: add --overwrite"));
	strcat(args, " --overwrite");
	CHECK(t_run(args, out, sizeof(out)) == 0);
	CHECK(t_exists("res/config.resolved.json") &&
	      t_exists("res/.hybridspec-files"));
	/* and never a folder holding a file hybridspec did not write */
	t_write("res/notes.txt", "mine\n");
	CHECK(t_run(args, out, sizeof(out)) == 2 &&
	      strstr(out, "'res/notes.txt' was not written by hybridspec"));
	CHECK(t_exists("res/notes.txt"));
	v = json_load_file(strcat(strcpy(out, t_tmpdir()),
				  "/res/config.resolved.json"), 0, NULL);
	CHECK(v && json_integer_value(json_object_get(v, "seed")) == 3);
	json_decref(v);
	/* nor one holding a folder a user made, empty or not */
	remove(strcat(strcpy(out, t_tmpdir()), "/res/notes.txt"));
	mkdir(strcat(strcpy(out, t_tmpdir()), "/res/mine"), 0777);
	CHECK_MSG(t_run(args, out, sizeof(out)) == 2 &&
		  strstr(out, "'res/mine' was not written by hybridspec"),
		  "%s", out);
	CHECK(fs_is_dir(strcat(strcpy(out, t_tmpdir()), "/res/mine")));
	/* nor a folder whose only file a user named as hybridspec's own:
	 * without the list of what hybridspec wrote, nothing is its; said
	 * at once, not "add --overwrite" first */
	mkdir(strcat(strcpy(out, t_tmpdir()), "/fake"), 0777);
	t_write("fake/config.resolved.json", "my notes\n");
	snprintf(args, sizeof(args), "config %s -o fake", small());
	CHECK_MSG(t_run(args, out, sizeof(out)) == 2 &&
		  strstr(out, "'fake' has no list of the files hybridspec "
			 "wrote there"), "%s", out);
	strcat(args, " --overwrite");
	CHECK_MSG(t_run(args, out, sizeof(out)) == 2 &&
		  strstr(out, "'fake' has no list of the files hybridspec "
			 "wrote there"), "%s", out);
	{
		char *kept = t_slurp("fake/config.resolved.json");

		CHECK(kept && !strcmp(kept, "my notes\n"));
		free(kept);
	}
	/* never replaces a directory that is not hybridspec's; an empty one
	 * holds nothing to lose */
	mkdir(strcat(strcpy(out, t_tmpdir()), "/mine"), 0777);
	snprintf(args, sizeof(args), "config %s -o mine", small());
	CHECK_MSG(t_run(args, out, sizeof(out)) == 0 &&
		  t_exists("mine/config.resolved.json"), "%s", out);
	mkdir(strcat(strcpy(out, t_tmpdir()), "/theirs"), 0777);
	t_write("theirs/notes.txt", "mine\n");
	snprintf(args, sizeof(args), "config %s -o theirs", small());
	CHECK(t_run(args, out, sizeof(out)) == 2);
	CHECK(strstr(out, "'theirs' exists and is not a hybridspec results "
			  "directory") != NULL && t_exists("theirs/notes.txt"));
	/* --overwrite replaces only the results of the same command: a run's
	 * folder is not a config's */
	snprintf(args, sizeof(args), "run %s -o ran --quiet", small());
	CHECK_MSG(t_run(args, out, sizeof(out)) == 0, "%s", out);
	snprintf(args, sizeof(args), "config %s -o ran --overwrite", small());
	CHECK(t_run(args, out, sizeof(out)) == 2);
	CHECK_MSG(strstr(out, "'ran' holds the results of hybridspec run, not "
			 "of hybridspec config") && t_exists("ran/summary.json"),
		  "%s", out);
	/* nor is a sweep's */
	mkdir(strcat(strcpy(out, t_tmpdir()), "/swept"), 0777);
	t_write("swept/sweep.json", "{}\n");
	snprintf(args, sizeof(args), "config %s -o swept --overwrite", small());
	CHECK(t_run(args, out, sizeof(out)) == 2);
	CHECK_MSG(strstr(out, "'swept' holds the results of hybridspec sweep"),
		  "%s", out);
	/* without -o, the resolved config goes to stdout */
	snprintf(args, sizeof(args), "config %s", small());
	CHECK(t_run(args, out, sizeof(out)) == 0);
	CHECK(strstr(out, "\"kv_capacity_tokens\"") != NULL);
}

/* calib's -o replaces only a file hybridspec wrote, and never the
 * profile it derives from; output that cannot all be written is an
 * error, not a silent half */
static void calib_out(void)
{
	const char *bin = getenv("HYBRIDSPEC_BIN");
	char out[4096], cmd[1024], *kept;

	t_write("keep.txt", "precious\n");
	CHECK(t_run("calib derive --device snapdragon-8-gen3 -o keep.txt", out,
		    sizeof(out)) == 2 &&
	      strstr(out, "'keep.txt' exists and is not a file hybridspec "
			  "wrote"));
	kept = t_slurp("keep.txt");
	CHECK(kept && !strcmp(kept, "precious\n"));
	free(kept);
	CHECK_MSG(t_run("calib derive --device snapdragon-8-gen3 -o d.json", out,
			sizeof(out)) == 0, "%s", out);
	/* its own file: replaced only when asked */
	CHECK_MSG(t_run("calib derive --device raspberry-pi-5 -o d.json", out,
			sizeof(out)) == 2 &&
		  strstr(out, "'d.json' exists: add --overwrite to replace it"),
		  "%s", out);
	CHECK_MSG(t_run("calib derive --device raspberry-pi-5 -o d.json "
			"--overwrite", out, sizeof(out)) == 0, "%s", out);
	CHECK(t_run("calib derive --device raspberry-pi-5 -o keep.txt "
		    "--overwrite", out, sizeof(out)) == 2 &&
	      strstr(out, "'keep.txt' exists and is not a file hybridspec "
			  "wrote"));
	/* every command's files, checked before its work: a measurement,
	 * a server, an edge */
	CHECK(t_run("calib cpu --shape llama2-7b -o d.json --verify d.json", out,
		    sizeof(out)) == 2 && strstr(out, "-o and --verify name one"));
	CHECK(t_run("calib cpu --shape llama2-7b -o keep.txt", out,
		    sizeof(out)) == 2 && strstr(out, "'keep.txt' exists"));
	CHECK(t_run("serve --port 0 --exit-after 1 --stats keep.txt", out,
		    sizeof(out)) == 2 && strstr(out, "'keep.txt' exists"));
	CHECK(t_run("serve --port 0 --exit-after 1 --log keep.txt", out,
		    sizeof(out)) == 2 && strstr(out, "'keep.txt' exists"));
	CHECK(t_run("edge --connect 127.0.0.1:9 --log keep.txt", out,
		    sizeof(out)) == 2 && strstr(out, "'keep.txt' exists"));
	/* a file that cannot be made is found before the work too */
	CHECK(t_run("serve --port 0 --stats nowhere/s.json", out,
		    sizeof(out)) == 2 &&
	      strstr(out, "cannot write 'nowhere/s.json': its folder 'nowhere'"));
	CHECK(t_run("edge --connect 127.0.0.1:9 --log nowhere/e.json", out,
		    sizeof(out)) == 2 && strstr(out, "its folder 'nowhere'"));
	CHECK(t_run("eval accept --target m --draft m --text t --out "
		    "nowhere/a.json", out, sizeof(out)) == 2 &&
	      strstr(out, "its folder 'nowhere'"));
	CHECK(t_run("eval accept --target m --draft m --text t --out .", out,
		    sizeof(out)) == 2 && strstr(out, "'.' is a folder"));
	/* a profile of its own, before the measurement */
	CHECK(t_run("eval accept --target m --draft m --text t --out d.json",
		    out, sizeof(out)) == 2 &&
	      strstr(out, "'d.json' exists: add --overwrite"));
	CHECK(t_run("calib cpu --shape llama2-7b -o d.json", out,
		    sizeof(out)) == 2 && strstr(out, "'d.json' exists: add "
						     "--overwrite"));
	CHECK(t_run("calib gpu --roofline -o d.json", out, sizeof(out)) == 2 &&
	      strstr(out, "'d.json' exists: add --overwrite"));
	kept = t_slurp("d.json");
	t_write("accept-m-w4a16.json", kept ? kept : "");
	free(kept);
	CHECK_MSG(t_run("calib accept --target m --drafts w8a16,w4a16 --text t "
			"-o .", out, sizeof(out)) == 2 &&
		  strstr(out, "'./accept-m-w4a16.json' exists: add --overwrite") &&
		  !strstr(out, "acceptance of"), "%s", out);
	kept = t_slurp("keep.txt");
	CHECK(kept && !strcmp(kept, "precious\n"));
	free(kept);
	CHECK(t_run("calib derive d.json --device raspberry-pi-5 -o d.json", out,
		    sizeof(out)) == 2);
	CHECK(t_run("calib derive --device raspberry-pi-5 -o nowhere/d.json",
		    out, sizeof(out)) == 2 &&
	      strstr(out, "cannot write 'nowhere/d.json'"));
	if (access("/dev/full", W_OK) == 0) {
		snprintf(cmd, sizeof(cmd), "'%s' --version > /dev/full 2>/dev/null",
			 bin ? bin : "build/hybridspec");
		CHECK(WEXITSTATUS(system(cmd)) == 2);
	}
}

/* run --columns names every figure summary.json has: its top level,
 * /cloud and a group's */
static void columns_cover_summary(void)
{
	static char out[32768];
	char args[2 * PATH_MAX];
	json_t *sum, *parts[3];
	const char *key;
	json_t *v;

	snprintf(args, sizeof(args), "run %s -o r -q", small());
	CHECK_MSG(t_run(args, out, sizeof(out)) == 0, "%s", out);
	CHECK(t_run("run --columns", out, sizeof(out)) == 0);
	sum = json_load_file(strcat(strcpy(args, t_tmpdir()), "/r/summary.json"),
			     0, NULL);
	CHECK(sum != NULL);
	parts[0] = sum;
	parts[1] = json_object_get(sum, "cloud");
	parts[2] = json_array_get(json_object_get(sum, "groups"), 0);
	for (int k = 0; k < 3; k++)
		json_object_foreach(parts[k], key, v) {
			size_t n = strlen(key);
			char sect[80];
			bool found;

			/* a section ("/cloud/kv"), or a name of a row */
			snprintf(sect, sizeof(sect), "/%s", key);
			found = (json_is_object(v) || json_is_array(v)) &&
				strstr(out, sect);

			/* "  a, b   meaning": the names end at a space not
			 * after a comma */
			for (const char *l = out; !found && l && *l;
			     l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
				const char *q = l + 2;

				if (strncmp(l, "  ", 2) || l[2] == ' ')
					continue;
				while (*q && *q != '\n' && !found) {
					found = !strncmp(q, key, n) &&
						(q[n] == ',' || q[n] == ' ');
					while (*q && *q != ',' && *q != ' ' &&
					       *q != '\n')
						q++;
					if (*q != ',')
						break;
					q += 2;
				}
			}
			CHECK_MSG(found, "--columns does not name %s (part %d)",
				  key, k);
		}
	json_decref(sum);
}

static void usage_errors(void)
{
	char out[4096];

	CHECK(t_run("", out, sizeof(out)) == 2 && strstr(out, "usage:"));
	CHECK(t_run("--help", out, sizeof(out)) == 0 && strstr(out, "config"));
	CHECK(t_run("frobnicate", out, sizeof(out)) == 2 &&
	      strstr(out, "unknown command 'frobnicate'"));
	CHECK(t_run("config --help", out, sizeof(out)) == 0 &&
	      strstr(out, "--set POINTER=VALUE"));
	CHECK(t_run("config", out, sizeof(out)) == 2);
	CHECK(t_run("bench engine --steps 9999", out, sizeof(out)) == 2 &&
	      strstr(out, "hybridspec bench engine: --steps: expected an "
			  "integer >= 10000, got \"9999\""));
	CHECK(t_run("bench nothing", out, sizeof(out)) == 2);
	CHECK(t_run("run c.json --seed 1 --seed 2", out, sizeof(out)) == 2 &&
	      strstr(out, "--seed: given twice"));
	CHECK(t_run("config .", out, sizeof(out)) == 2 &&
	      strstr(out, ".: a folder, where a JSON file was expected"));
	/* an option for another that is not given */
	CHECK(t_run("run c.json --trace-tenants 4", out, sizeof(out)) == 2 &&
	      strstr(out, "--trace-tenants is for --trace, which is not given"));
	CHECK(t_run("config c.json --overwrite", out, sizeof(out)) == 2 &&
	      strstr(out, "--overwrite is for --out"));
}

/* --version names the commit and the build; every command's help ends
 * with its exit statuses */
static void version_and_help(void)
{
	static const char *const cmds[] = {
		"run", "calib", "sweep", "formulas", "generate", "eval", "serve",
		"edge", "validate", "config", "bench", "bench engine",
		"bench kernels", "bench gpu", "calib cpu", "calib derive",
		"calib devices", "calib accept", "calib gpu", "calib check",
	};
	char out[16384], args[64];

	CHECK(t_run("run --help", out, sizeof(out)) == 0 &&
	      strstr(out, "the printed table's columns:") &&
	      strstr(out, "  tok/v     tokens committed per verdict"));
	CHECK(t_run("run --columns", out, sizeof(out)) == 0 &&
	      strstr(out, "requests.csv, a row per finished request:\n  group ") &&
	      strstr(out, "  tokens_per_verdict     tokens committed per verdict"));
	CHECK(t_run("--version", out, sizeof(out)) == 0 &&
	      !strncmp(out, "hybridspec ", 11) && strstr(out, "built with CC="));
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		snprintf(args, sizeof(args), "%s --help", cmds[i]);
		CHECK_MSG(t_run(args, out, sizeof(out)) == 0 &&
			  strstr(out, "\nexit status: 0 "),
			  "'%s' gives no exit statuses", args);
	}
}

/* Whether text holds word whole (not the head of a longer option). */
static bool has_option(const char *text, const char *word)
{
	size_t n = strlen(word);

	for (const char *p = text; (p = strstr(p, word)); p += n)
		if (!isalnum((unsigned char)p[n]) && p[n] != '-')
			return true;
	return false;
}

/* Every option a command's help lists is in its usage lines, by its long
 * or its short name (an option row is "  -o, --out" or "      --json";
 * a row's continuation is indented further). */
static void usage_lists_options(void)
{
	static const char *const cmds[] = {
		"run", "sweep", "plan", "plot", "formulas", "generate", "eval ppl",
		"eval accept", "serve", "edge", "validate", "config", "claims",
		"bench engine", "bench kernels", "bench gpu", "calib cpu",
		"calib derive", "calib devices", "calib accept", "calib gpu",
		"calib check", "calib import-profiles", "gpu check", "gpu compare",
	};
	char out[16384], args[64];

	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		char *usage_end, *line, name[64], brief[8];

		snprintf(args, sizeof(args), "%s --help", cmds[i]);
		if (t_run(args, out, sizeof(out)) != 0 ||
		    !(usage_end = strstr(out, "\n\n")) ||
		    !(line = strstr(out, "\noptions:\n"))) {
			CHECK_MSG(0, "'%s': no usage or no options", args);
			continue;
		}
		*usage_end = '\0';
		for (; (line = strchr(line + 1, '\n')); ) {
			const char *o = line + 1;
			int n = 0;

			*brief = '\0';
			if (!strncmp(o, "  -", 3) && o[3] != '-' &&
			    !strncmp(o + 4, ", --", 4)) {
				snprintf(brief, sizeof(brief), "%.2s", o + 2);
				o += 6;
			} else if (!strncmp(o, "      --", 8)) {
				o += 6;
			} else {
				continue;
			}
			sscanf(o, "%63[a-z0-9-]%n", name, &n);
			if (!n || !strcmp(name, "--help"))
				continue;
			CHECK_MSG(has_option(out, name) ||
				  (*brief && has_option(out, brief)),
				  "'%s': %s is not in the usage", cmds[i], name);
		}
	}
}

static void bench_engine_json(void)
{
	char out[4096];
	json_t *v, *rows;

	CHECK(t_run("bench engine --json --steps 20000", out, sizeof(out)) == 0);
	v = json_loads(out, 0, NULL);
	rows = json_object_get(v, "rows");
	CHECK_MSG(json_array_size(rows) == 3, "%s", out);
	for (size_t i = 0; i < json_array_size(rows); i++) {
		json_t *r = json_array_get(rows, i);

		CHECK(json_integer_value(json_object_get(r, "pending")) > 0);
		CHECK(json_number_value(json_object_get(r, "events_per_s")) > 0);
	}
	json_decref(v);
}

/* bench kernels --row-kernels: W4A16 on the row kernels beside the panels, at
 * the same shape, batch and threads, on a set with digits over panels;
 * refused, before timing, on one without */
static void bench_kernels_rows(void)
{
	const char *const *nm = kern_available();
	char out[8192], args[128];
	json_t *v, *rows;
	int found = 0;

	CHECK_MSG(t_run("bench kernels --row-kernels --kernel ref", out,
			sizeof(out)) == 2 &&
		  strstr(out, "bench kernels: --row-kernels: kernel set ref has "
			 "no panels for its W4A16") &&
		  !strstr(out, "stream"), "%s", out); /* nothing timed */
	while (*nm && !kern_find(*nm)->dig_run)
		nm++;
	if (!*nm) {
		t_skip("no kernel set on this CPU has digits over panels");
		return;
	}
	snprintf(args, sizeof(args), "bench kernels --row-kernels --kernel %s "
		 "--shape 64x256 --hot --batch 1 --threads 1 --json", *nm);
	CHECK_MSG(t_run(args, out, sizeof(out)) == 0, "%s", out);
	v = json_loads(out, 0, NULL);
	rows = json_object_get(v, "rows");
	CHECK_MSG(json_array_size(rows) == 5, "%s", out);
	for (size_t i = 0; i < json_array_size(rows); i++) {
		json_t *r = json_array_get(rows, i);
		const char *k = json_string_value(json_object_get(r, "kernel"));
		const char *sh = json_string_value(json_object_get(r, "shape"));

		CHECK(json_number_value(json_object_get(r, "seconds")) > 0);
		CHECK(sh && !strcmp(sh, "64x256") &&
		      json_integer_value(json_object_get(r, "batch")) == 1);
		found += k && (!strcmp(k, "w4a16") || !strcmp(k, "w4a16-rows"));
	}
	CHECK_MSG(found == 2, "%s", out);
	json_decref(v);
}

/* Bad simulation input: exit 2, the message, and no results directory. */
/* config.resolved.json names the files its config named by absolute
 * paths: rerun from its results folder, it reads the same ones. */
static void resolved_reruns(void)
{
	char out[4096];

	t_write("rtt.txt", "0.04\n0.05\n0.06\n");
	t_write("c.json", "{\"tenants\": [{\"name\": \"g\", \"count\": 2, "
		"\"protocol\": {\"kind\": \"cloud_only\"}, \"workload\": "
		"{\"requests\": 2, \"prompt_tokens\": 16, \"output_tokens\": 8},"
		" \"wan\": {\"rtt_s\": {\"dist\": \"empirical\", \"file\": "
		"\"rtt.txt\"}}}]}");
	CHECK_MSG(t_run("run c.json -o out/r --quiet", out, sizeof(out)) == 0,
		  "%s", out);
	CHECK_MSG(t_run("run out/r/config.resolved.json -o r2 --quiet", out,
			sizeof(out)) == 0, "%s", out);
	CHECK(t_exists("r2/summary.json"));
	/* the paper's setting (an acceptance profile, a GPU preset): the
	 * rerun's summary is the run's, byte for byte, its sources' words
	 * included */
	{
		char args[2 * PATH_MAX], *a, *b;

		small(); /* sets repo */
		snprintf(args, sizeof(args), "run %s/configs/paper/async.json -o p1 "
			 "--quiet --set /tenants/0/workload/requests=2 --set "
			 "'/tenants/0/workload/think_s={\"dist\": \"exponential\", "
			 "\"mean\": 5.000000000000001}'", repo);
		CHECK_MSG(t_run(args, out, sizeof(out)) == 0, "%s", out);
		CHECK_MSG(t_run("run p1/config.resolved.json -o p2 --quiet", out,
				sizeof(out)) == 0, "%s", out);
		a = t_slurp("p1/summary.json");
		b = t_slurp("p2/summary.json");
		CHECK(a && b && strstr(a, "\"idle_power_and_price\": \"") &&
		      !strcmp(a, b));
		free(a);
		free(b);
	}
}

static void run_bad_input(void)
{
	static const struct bad_case cases[] = {
		{ "window < 1", NULL, "--set /protocol/window=0",
		  "/protocol/window: expected an integer in [1, 1024], got 0" },
		{ "gamma = 0", NULL, "--set /tenants/1/protocol/gamma=0",
		  "/tenants/1/protocol/gamma: expected an integer in [1, 64], "
		  "got 0" },
		{ "a name that leaves the results folder", NULL,
		  "--set /name='\"../x\"'",
		  "/name: expected a name for a results folder" },
		{ "a group name that splits a CSV row", NULL,
		  "--set /tenants/0/name='\"a,b\"'",
		  "/tenants/0/name: expected a name without ','" },
		{ "prompts of an infinite mean", NULL,
		  "--set '/tenants/0/workload/prompt_tokens={\"dist\": \"pareto\", "
		  "\"xm\": 1, \"alpha\": 0.5}'",
		  "/tenants/0/workload/prompt_tokens: expected lengths of a finite "
		  "mean" },
		{ "a number JSON cannot hold", NULL,
		  "--set /slo/ttft_s=1e400",
		  "--set '/slo/ttft_s': the number 1e400 is out of range" },
		{ "a key twice", NULL,
		  "--set '/slo={\"ttft_s\": 1, \"ttft_s\": 2}'",
		  "--set '/slo': duplicate object key" },
		{ "a watermark of the whole pool", NULL, "--set /cloud/watermark=1",
		  "/cloud/watermark: expected a number in [0, 1), got 1" },
		{ "tp not dividing the heads", NULL, "--set /cloud/tp=3",
		  "/cloud/tp: expected a tp that divides " },
		{ "alpha > 1", NULL, "--set /tenants/0/acceptance/alpha=1.2",
		  "/tenants/0/acceptance/alpha: expected a number in [0, 1], "
		  "got 1.2" },
		{ "KV below one request", NULL,
		  "--set /cloud/kv_capacity_tokens=100",
		  "/cloud/kv_capacity_tokens: 100 tokens (6 blocks of 16) are "
		  "fewer than one request of group \"laptops\" needs (192 "
		  "tokens" },
		{ "profile that does not parse", NULL,
		  "--set /cloud/gpu/table=table.json", "table.json:1:" },
		{ "profile with a bad row", NULL,
		  "--set /cloud/gpu/table=table2.json",
		  "table2.json: /seconds/1/0: expected a time > 0 s, not less "
		  "than the one for fewer tokens, got 0.001" },
		{ "trace with a negative length", NULL,
		  "--set /tenants/0/workload='{\"arrival\":\"trace\","
		  "\"trace\":\"arrivals.csv\"}'",
		  "arrivals.csv:3: output_tokens: expected a whole number of "
		  "tokens in [1, 1e+07], got \"-5\"" },
		{ "a time past the config's bound", NULL,
		  "--set /tenants/0/device/draft_base_s=1e308",
		  "/tenants/0/device/draft_base_s: expected a number in (0, "
		  "1e+09], got 1e308" },
		{ "a think time of a mean past the bound", NULL,
		  "--set '/tenants/0/workload/think_s={\"dist\": \"exponential\", "
		  "\"mean\": 1e300}'",
		  "/tenants/0/workload/think_s: expected a time of mean at most "
		  "1e+09 s" },
		{ "a gamma too narrow to draw (its mean was not a number)", NULL,
		  "--set '/tenants/0/workload/think_s={\"dist\": \"gamma\", "
		  "\"mean\": 1, \"cv\": 1e-300}'",
		  "/tenants/0/workload/think_s/cv: expected a number in [1e-06, "
		  "1e+06], got 1e-300" },
		{ "a lognormal too wide to draw", NULL,
		  "--set '/tenants/0/workload/think_s={\"dist\": \"lognormal\", "
		  "\"mean\": 1, \"sd\": 1e300}'",
		  "/tenants/0/workload/think_s/sd: expected an sd at most 1e+06 "
		  "times the mean, got 1e300" },
		{ "a uniform upside down", NULL,
		  "--set '/tenants/0/workload/think_s={\"dist\": \"uniform\", "
		  "\"min\": 10, \"max\": 5}'",
		  "expected a uniform distribution whose min is at most its max" },
		{ "a rate with infinite gaps", NULL,
		  "--set /tenants/0/workload/arrival=poisson "
		  "--set /tenants/0/workload/rate_per_s=1e-320",
		  "/tenants/0/workload/rate_per_s: expected a number in [1e-09, "
		  "1e+09]" },
		{ "simulated time out of scale", NULL,
		  "--set /tenants/0/workload/think_s=1e9 "
		  "--set /tenants/0/workload/requests=20",
		  "simulated time passed 1e+10 s (317 years)" },
		{ "an iteration that never ends (it hung in the GPU's bins)",
		  NULL, "--set /cloud/gpu/pricing=roofline "
		  "--set /cloud/gpu/eta_bw=1e-300 --set /cloud/gpu/eta_flops=1e-300 "
		  "--set /cloud/gpu/mem_bw_Bps=1 --set /cloud/gpu/fp16_flops=1",
		  "simulated time passed 1e+10 s (317 years)" },
		{ "a GPU's bandwidth below a byte a second", NULL,
		  "--set /cloud/gpu/mem_bw_Bps=1e-300",
		  "/cloud/gpu/mem_bw_Bps: expected a number >= 1" },
		{ "a device's power past a megawatt (its energy was inf)", NULL,
		  "--set /tenants/0/device/power_busy_w=1e308",
		  "/tenants/0/device/power_busy_w: expected a number in [0, "
		  "1e+06], got 1e308" },
		{ "a weight of more than 16 bytes (its memory was inf GB)", NULL,
		  "--set /cloud/weight_bytes=1e308",
		  "/cloud/weight_bytes: expected a number in (0, 16], got "
		  "1e308" },
		{ "acceptance trace with a bad bit", NULL,
		  "--set '/tenants/0/acceptance={\"model\":\"trace\","
		  "\"file\":\"bits.txt\"}'",
		  "bits.txt:2: expected '0' or '1' in an acceptance trace, got "
		  "'2'" },
	};
	char out[4096], args[1024], cfg_text[8192];
	FILE *f = fopen(small(), "r");
	size_t n = fread(cfg_text, 1, sizeof(cfg_text) - 1, f);

	fclose(f);
	cfg_text[n] = '\0';
	t_write("c.json", cfg_text);
	t_write("table.json", "{\"tokens\": [1, 2,, 3]}");
	t_write("table2.json", "{\"gpu\": \"X\", \"tokens\": [1, 64], "
		"\"ctx\": [128], \"seconds\": [[0.002], [0.001]]}");
	t_write("arrivals.csv", "arrival_s,prompt_tokens,output_tokens\n"
		"0.5,10,20\n1.0,10,-5\n");
	t_write("bits.txt", "1101\n1121\n");
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct bad_case *c = &cases[i];
		int rc;

		snprintf(args, sizeof(args), "run c.json -o out %s", c->extra);
		rc = t_run(args, out, sizeof(out));
		CHECK_MSG(rc == 2, "%s: exit status %d, want 2", c->what, rc);
		CHECK_MSG(strstr(out, c->want) != NULL, "%s: output \"%s\" lacks "
			  "\"%s\"", c->what, out, c->want);
		CHECK_MSG(!t_exists("out"), "%s: left a results directory",
			  c->what);
	}
}

/* The same seed gives byte-identical files; another seed does not. */
static void run_deterministic(void)
{
	static const char *const files[] = { "summary.json", "tenants.csv",
		"requests.csv", "config.resolved.json", "trace.json" };
	char out[8192], args[2 * PATH_MAX];
	json_t *trace;

	for (int k = 0; k < 3; k++) {
		snprintf(args, sizeof(args), "run %s -o r%d --trace --quiet %s",
			 small(), k, k == 2 ? "--seed 8" : "");
		CHECK(t_run(args, out, sizeof(out)) == 0);
	}
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		char pa[256], pb[256], pc[256], *a, *b, *c;

		snprintf(pa, sizeof(pa), "r0/%s", files[i]);
		snprintf(pb, sizeof(pb), "r1/%s", files[i]);
		snprintf(pc, sizeof(pc), "r2/%s", files[i]);
		a = t_slurp(pa);
		b = t_slurp(pb);
		c = t_slurp(pc);

		CHECK_MSG(a && b && !strcmp(a, b), "%s differs between runs",
			  files[i]);
		if (strcmp(files[i], "config.resolved.json"))
			CHECK_MSG(c && strcmp(a, c), "%s same for another seed",
				  files[i]);
		free(a);
		free(b);
		free(c);
	}
	snprintf(args, sizeof(args), "%s/r0/trace.json", t_tmpdir());
	trace = json_load_file(args, 0, NULL);
	CHECK(json_array_size(json_object_get(trace, "traceEvents")) > 100);
	{
		/* every track named after its tenant or replica; the edge's
		 * prompt prefill is a span */
		json_t *ev, *evs = json_object_get(trace, "traceEvents");
		size_t i;
		int tenant0 = 0, replica0 = 0, prefill = 0;

		json_array_foreach(evs, i, ev) {
			const char *name = json_string_value(json_object_get(ev, "name"));
			const char *arg = json_string_value(json_object_get(
				json_object_get(ev, "args"), "name"));

			if (!strcmp(name, "thread_name") && arg) {
				tenant0 += !strncmp(arg, "tenant 0 (", 10);
				replica0 += !strcmp(arg, "replica 0");
			}
			prefill += !strcmp(name, "prefill");
		}
		CHECK_MSG(tenant0 == 4 && replica0 == 1 && prefill > 0,
			  "tenant 0 named on %d tracks, replica 0 on %d, %d prefills",
			  tenant0, replica0, prefill);
	}
	json_decref(trace);
	CHECK(t_exists("r0/perf.json"));
}

/* SIGTERM (and SIGHUP, a closed terminal) stops a run: exit status
 * 128 + N, the message, and neither the results directory nor its
 * temporary sibling left behind. */
static void run_interrupted(void)
{
	static const struct {
		const char *name;
		int sig;
	} sigs[] = { { "TERM", 15 }, { "HUP", 1 } };
	const char *bin = getenv("HYBRIDSPEC_BIN");

	for (size_t k = 0; k < 2; k++) {
		char cmd[3 * PATH_MAX], want[64], *err, *rc_text;
		int rc;

		/* about 10 s of simulation, stopped after 0.3 s */
		snprintf(cmd, sizeof(cmd), "cd '%s' && rm -rf out && mkdir out && "
			 "{ '%s' run '%s' -o out/r --set /tenants/0/count=20000 "
			 "--set /tenants/0/workload/requests=20 --quiet 2>err & "
			 "p=$!; sleep 0.3; kill -%s $p; wait $p; echo $? > rc; }",
			 t_tmpdir(), bin ? bin : "build/hybridspec", small(),
			 sigs[k].name);
		CHECK(system(cmd) == 0);
		rc_text = t_slurp("rc");
		err = t_slurp("err");
		rc = rc_text ? atoi(rc_text) : -1;
		snprintf(want, sizeof(want), "stopped by signal %d; nothing "
			 "written", sigs[k].sig);
		if (rc == 0) {
			printf("    note: the run ended before SIG%s; the "
			       "interrupt is not checked\n", sigs[k].name);
		} else {
			CHECK_MSG(rc == 128 + sigs[k].sig, "SIG%s: exit status "
				  "%d, want %d", sigs[k].name, rc,
				  128 + sigs[k].sig);
			CHECK_MSG(err && strstr(err, want), "SIG%s: stderr: %s",
				  sigs[k].name, err ? err : "");
			CHECK(!t_exists("out/r"));
			snprintf(cmd, sizeof(cmd), "test -z \"$(ls -A '%s/out')\"",
				 t_tmpdir());
			CHECK_MSG(system(cmd) == 0, "SIG%s: temporary files left "
				  "behind", sigs[k].name);
		}
		free(rc_text);
		free(err);
	}
}

/* A GPU kept busy: the steady window's share of its time is at most 1
 * (an iteration's time split at the window's bins, not counted whole in
 * the bin it starts in: 1.005 here before) */
static void run_busy_share(void)
{
	char out[8192], args[2 * PATH_MAX], *text;
	json_t *sum;
	double busy;

	small(); /* sets repo */
	snprintf(args, sizeof(args), "run %s/configs/paper/cloud_only.json -o busy "
		 "--quiet --set /tenants/0/count=64 --set "
		 "/tenants/0/workload/requests=3 --set "
		 "/tenants/0/workload/prompt_tokens=4000 --set "
		 "/tenants/0/workload/output_tokens=64", repo);
	CHECK_MSG(t_run(args, out, sizeof(out)) == 0, "%s", out);
	text = t_slurp("busy/summary.json");
	sum = text ? json_loads(text, 0, NULL) : NULL;
	busy = json_number_value(jx_at(sum, "/steady/gpu_busy_fraction"));
	free(text);
	CHECK_MSG(busy > 0.9 && busy <= 1, "GPU busy %.6f", busy);
	json_decref(sum);
}

/* A golden summary at a fixed seed (make golden rewrites it). */
static void run_golden(void)
{
	char out[256], args[2 * PATH_MAX], path[PATH_MAX + 64];
	char *got, *want;
	FILE *f;
	long n;

	snprintf(args, sizeof(args), "run %s -o g --quiet", small());
	CHECK(t_run(args, out, sizeof(out)) == 0);
	got = t_slurp("g/summary.json");
	snprintf(path, sizeof(path), "%s/tests/golden/small.summary.json", repo);
	f = fopen(path, "rb");
	CHECK_MSG(f != NULL, "no %s: run make golden", path);
	if (!f || !got) {
		free(got);
		return;
	}
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	want = calloc(1, (size_t)n + 1);
	CHECK(fread(want, 1, (size_t)n, f) == (size_t)n);
	fclose(f);
	CHECK_MSG(!strcmp(got, want), "summary.json differs from the golden "
		  "file (if the change is intended: make golden)");
	{
		/* TPOT's quantiles are of the requests whose mean is tpot_s */
		json_t *sum = json_loads(got, 0, NULL);
		json_t *all = json_object_get(sum, "all");
		json_t *q = json_object_get(all, "tpot_quantiles_s");
		double mean = json_number_value(json_object_get(all, "tpot_s"));

		CHECK_NEAR(json_number_value(json_object_get(q, "mean")), mean,
			   1e-9 * mean);
		CHECK(json_number_value(json_object_get(q, "p50")) <=
			      json_number_value(json_object_get(q, "p99")) &&
		      json_number_value(json_object_get(q, "p99")) <=
			      json_number_value(json_object_get(q, "max")) * 1.0100001);
		json_decref(sum);
	}
	free(got);
	free(want);
}

/* Every committed config reads cleanly. */
static void committed_configs(void)
{
	static const char *const files[] = {
		"configs/paper/sync.json", "configs/paper/async.json",
		"configs/paper/cloud_only.json", "configs/paper/edge_only.json",
		"configs/paper/multi_tenant.json", "configs/bench/scale-1000.json",
		"configs/bench/scale-100k.json",
	};
	char out[65536], args[2 * PATH_MAX];

	small();
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		snprintf(args, sizeof(args), "config %s/%s", repo, files[i]);
		CHECK_MSG(t_run(args, out, sizeof(out)) == 0, "%s: %s", files[i],
			  out);
	}
}

/* formulas --check: every in-regime formula within 1% of the simulator. */
static void formulas_check(void)
{
	static char out[1 << 16];
	json_t *v, *checks;
	size_t in_regime = 0;

	CHECK(t_run("formulas --check --json", out, sizeof(out)) == 0);
	v = json_loads(out, 0, NULL);
	CHECK_MSG(v != NULL, "not JSON: %.200s", out);
	CHECK(json_is_true(json_object_get(v, "passed")));
	checks = json_object_get(v, "checks");
	for (size_t i = 0; i < json_array_size(checks); i++) {
		json_t *c = json_array_get(checks, i);

		if (!json_is_true(json_object_get(c, "in_regime")))
			continue;
		in_regime++;
		CHECK_MSG(json_number_value(json_object_get(c, "rel_error")) <=
				  0.01, "%s (%s): off by %.3f%%",
			  json_string_value(json_object_get(c, "formula")),
			  json_string_value(json_object_get(c, "regime")),
			  100 * json_number_value(json_object_get(c, "rel_error")));
	}
	CHECK(in_regime >= 30);
	json_decref(v);
}

static void formulas_for_config(void)
{
	char out[16384], args[2 * PATH_MAX];
	json_t *v;
	double a;

	small(); /* sets repo */
	snprintf(args, sizeof(args), "formulas %s/configs/paper/sync.json --json",
		 repo);
	CHECK(t_run(args, out, sizeof(out)) == 0);
	v = json_loads(out, 0, NULL);
	CHECK_MSG(v != NULL, "%.300s", out);
	/* alpha: the mean of the acceptance profile's trace */
	a = json_number_value(json_object_get(v, "alpha"));
	CHECK(a > 0.5 && a < 1);
	CHECK_NEAR(json_number_value(json_object_get(v, "expected_accepted")),
		   (1 - pow(a, 5)) / (1 - a), 1e-9);
	CHECK(json_number_value(json_object_get(v, "ridge_tokens")) > 200);
	/* the tenants the text says: the fewer of the compute's and the KV
	 * cache's slots (the JSON had given the compute's alone, 22x the
	 * text's 173 on this config) */
	CHECK(json_number_value(json_object_get(v, "capacity_tenants")) > 0);
	CHECK_NEAR(json_number_value(json_object_get(v, "capacity_tenants")),
		   fmin(json_number_value(json_object_get(v,
				"capacity_tenants_compute")),
			json_number_value(json_object_get(v, "kv_slots"))), 1e-9);
	CHECK(json_number_value(json_object_get(v, "capacity_tenants")) <
	      json_number_value(json_object_get(v, "capacity_tenants_compute")));
	json_decref(v);
	CHECK(t_run("formulas", out, sizeof(out)) == 2);
	{
		/* a trace's lengths are its rows' means: the same cache slots
		 * as constant lengths of those means (it had read 0 for both) */
		char tr[PATH_MAX + 64];
		double slots[2];

		snprintf(tr, sizeof(tr), "%s", t_write("tr.csv",
			 "arrival_s,prompt_tokens,output_tokens\n"
			 "0,100,40\n1,300,80\n"));
		for (int k = 0; k < 2; k++) {
			char set[PATH_MAX + 128];

			snprintf(set, sizeof(set), k ?
				 "--set /tenants/0/workload/prompt_tokens=200 "
				 "--set /tenants/0/workload/output_tokens=60%.0s" :
				 "--set '/tenants/0/workload={\"arrival\": "
				 "\"trace\", \"trace\": \"%s\"}'", tr);
			snprintf(args, sizeof(args), "formulas %.2000s --json %.2000s",
				 small(), set);
			CHECK_MSG(t_run(args, out, sizeof(out)) == 0, "%s", out);
			v = json_loads(out, 0, NULL);
			slots[k] = json_number_value(json_object_get(v, "kv_slots"));
			json_decref(v);
		}
		CHECK_MSG(slots[0] > 0 && slots[0] == slots[1], "%g against %g",
			  slots[0], slots[1]);
	}
}

/* calib and bench kernels refuse what they cannot time, before timing */
static void calib_bad_input(void)
{
	char out[8192], args[PATH_MAX + 64];

	CHECK(t_run("calib cpu --shape mixtral-8x7b", out, sizeof(out)) == 2 &&
	      strstr(out, "a mixture of 8 experts"));
	CHECK(t_run("calib cpu --shape no-such-model", out, sizeof(out)) == 2 &&
	      strstr(out, "neither a model hybridspec knows") &&
	      strstr(out, "llama2-7b"));
	t_write("moe.json", "{\"model_type\": \"mixtral\", "
		"\"hidden_size\": 64, \"intermediate_size\": 128, "
		"\"num_hidden_layers\": 2, \"num_attention_heads\": 4, "
		"\"num_key_value_heads\": 2, \"vocab_size\": 256, "
		"\"num_local_experts\": 4, \"num_experts_per_tok\": 2}");
	snprintf(args, sizeof(args), "calib cpu --shape %s/moe.json", t_tmpdir());
	CHECK(t_run(args, out, sizeof(out)) == 2 &&
	      strstr(out, "a mixture of 4 experts"));
	CHECK(t_run("calib cpu --shape llama2-7b --block-acts int4", out,
		    sizeof(out)) == 2 &&
	      strstr(out, "--block-acts: expected int8 or fp16, got \"int4\""));
	CHECK(t_run("calib cpu --shape llama2-7b --decode-acts bf16", out,
		    sizeof(out)) == 2 &&
	      strstr(out, "--decode-acts: expected int8 or fp16, got \"bf16\""));
	/* a temperature a float holds as 0 (it aborted eval accept) */
	CHECK_MSG(t_run("eval accept --target a --draft b --text t "
			"--temperature 1e-38", out, sizeof(out)) == 2 &&
		  strstr(out, "--temperature: expected 0 (greedy) or a "
			 "temperature in [0.001, 1000], got \"1e-38\""), "%s",
		  out);
	CHECK(t_run("bench kernels --batch 3", out, sizeof(out)) == 2 &&
	      strstr(out, "--batch: expected 1, 4, 16, 64 or 512, got \"3\""));
	CHECK(t_run("bench kernels --shape 4096", out, sizeof(out)) == 2 &&
	      strstr(out, "--shape: expected ROWSxCOLUMNS"));
	/* a shape too small to stream from memory (it had allocated copies
	 * until the machine ran out): refused at once, --hot offered */
	CHECK_MSG(t_run("bench kernels --shape 1x1 --batch 1 --threads 1",
			out, sizeof(out)) == 2 &&
		  strstr(out, "bench kernels: --shape 1x1: a w4a16 matrix of ") &&
		  strstr(out, "add --hot"), "%s", out);
	CHECK(t_run("calib cpu --shape llama2-7b --kernel avx3", out,
		    sizeof(out)) == 2 &&
	      strstr(out, "calib cpu: --kernel: expected ") &&
	      strstr(out, "ref (the sets this build and CPU run), got \"avx3\""));
	CHECK(t_run("bench kernels --kernel avx3", out, sizeof(out)) == 2 &&
	      strstr(out, "bench kernels: --kernel: expected "));
	/* an unreadable text: said before any model is looked for (it had
	 * been read after the models loaded) */
	CHECK_MSG(t_run("eval accept --target no-such-model --draft "
			"no-such-model --text /nonexistent/t.txt", out,
			sizeof(out)) == 2 &&
		  strstr(out, "/nonexistent/t.txt: cannot read: No such file") &&
		  !strstr(out, "no-such-model"), "%s", out);
	CHECK_MSG(t_run("eval ppl --model no-such-model --text /", out,
			sizeof(out)) == 2 &&
		  strstr(out, "/: cannot read: Is a directory") &&
		  !strstr(out, "no-such-model"), "%s", out);
	/* one context or prefill length: refused before the model loads
	 * (a minute for llama2-7b's weights) */
	CHECK_MSG(t_run("calib cpu --shape llama2-7b --ctx 16 --prefill 16,32",
			out, sizeof(out)) == 2 &&
		  strstr(out, "calib cpu: expected two contexts (--ctx) and "
			 "two prefill lengths (--prefill) at least, got 1 and 2"),
		  "%s", out);
	/* one file under two spellings, before measuring (the verify table
	 * had replaced the profile) */
	CHECK_MSG(t_run("calib cpu --shape llama2-7b -o p.json --verify "
			"./p.json", out, sizeof(out)) == 2 &&
		  strstr(out, "-o and --verify name one file") &&
		  !t_exists("p.json"), "%s", out);
}

/* serve, edge, eval, generate and claims: a bad option is exit status 2
 * and a message that names the command, the option and the value, before
 * any model is loaded, and so are options of any command that would do
 * nothing together; the subcommands' --help end with exit statuses */
static void model_commands_bad_options(void)
{
	static const struct {
		const char *args, *want;
	} cases[] = {
		{ "serve --port x", "hybridspec serve: --port: expected an integer "
		  "in [0, 65535], got \"x\"" },
		{ "serve --policy fifo", "hybridspec serve: --policy: expected "
		  "continuous or window, got \"fifo\"" },
		{ "serve --model m:w5", "hybridspec serve: --model: expected a "
		  "weight format: f32, f16[-head]" },
		{ "edge --gamma 0", "hybridspec edge: --gamma: expected an integer "
		  "in [1, 64] or adaptive, got \"0\"" },
		{ "edge --protocol edge_only", "hybridspec edge: --protocol: "
		  "expected sync or async, got \"edge_only\"" },
		{ "edge --connect nohost", "hybridspec edge: --connect: expected "
		  "HOST:PORT" },
		{ "edge --wan '{\"rtt\": 1}'", "hybridspec edge: --wan: /rtt: "
		  "unknown key \"rtt\"" },
		{ "edge --wan '{\"rtt_s\": 0.02, \"rtt_s\": 0.03}'",
		  "hybridspec edge: --wan: expected a JSON object" },
		{ "validate s.json --target m:q9", "hybridspec validate: "
		  "--target: expected a weight format: f32" },
		{ "calib check --draft m:w5", "hybridspec calib check: --draft: "
		  "expected a weight format: f32" },
		{ "eval ppl --model m --text t --windows 0", "hybridspec eval ppl: "
		  "--windows: expected an integer in [1, 1073741824], got \"0\"" },
		{ "eval accept --target m", "hybridspec eval accept: give --target, "
		  "--draft and --text" },
		{ "generate --model m --temperature -1", "hybridspec generate: "
		  "--temperature: expected 0 (greedy) or a temperature in "
		  "[0.001, 1000], got \"-1\"" },
		{ "generate --steps 3", "hybridspec generate: give --model" },
		{ "edge --retry-s inf", "hybridspec edge: --retry-s: expected a "
		  "finite number >= 0, got \"inf\"" },
		{ "generate --model m:w4a16", "hybridspec generate: --model: "
		  "expected NAME or PATH, the format apart (--model m --quant "
		  "w4a16)" },
		{ "generate --model m --kernel avx3", "hybridspec generate: "
		  "--kernel: expected " },
		{ "eval ppl --model m --text t --kernel avx3", "hybridspec eval ppl: "
		  "--kernel: expected " },
		{ "eval accept --target m --draft m --text t --kernel avx3",
		  "hybridspec eval accept: --kernel: expected " },
		{ "claims", "hybridspec claims: expected RESULTS_DIR" },
		{ "formulas --check --set /cloud/replicas=2", "hybridspec "
		  "formulas: --set is a CONFIG's" },
		{ "formulas --table --json", "hybridspec formulas: --table and "
		  "--json cannot be given together" },
		/* options that do nothing where given, or cannot work */
		{ "bench kernels --quick --batch 16", "--quick and --batch "
		  "cannot be given together" },
		{ "bench engine --mm1 --steps 10000", "--mm1 and --steps cannot be "
		  "given together" },
		{ "run --columns c.json", "--columns takes nothing else" },
		{ "serve --kv-blocks 4 --watermark-blocks 4", "--watermark-blocks "
		  "4 leaves none of --kv-blocks 4" },
		{ "serve --block-tokens 8", "--block-tokens is for --kv-blocks" },
		{ "serve --window-s 0.5", "--window-s is the window policy's" },
		{ "serve --stats s.json --log s.json", "--stats and --log name "
		  "one file" },
		{ "serve --listen localhost", "--listen localhost: not an IPv4 "
		  "address" },
		{ "edge --protocol sync --window 8", "--window is async's" },
		/* names a user gets wrong: what there is, said */
		{ "calib derive --device raspberry-pi-5 --library nowhere",
		  "the device library 'nowhere' is not a folder" },
		{ "calib devices --library nowhere", "the device library "
		  "'nowhere' is not a folder" },
		{ "calib import-profiles . --gpu H200", "--gpu: expected one of "
		  "A100-80G, H100-SXM, A40 (the GPUs of Vidur's profiles), got "
		  "'H200'" },
		{ "calib gpu --roofline --gpu H300", "--gpu: unknown GPU preset "
		  "'H300' (known: H100-SXM, " },
		{ "calib accept --target m --drafts w8a16,w8a16 --text t -o .",
		  "--drafts: expected a format not listed before, got "
		  "\"w8a16\" twice" },
		{ "edge --silence-s 0.5 --wan '{\"rtt_s\": 1}'", "--silence-s 0.5 "
		  "is no longer than the link's round trip (1 s)" },
	};
	static const char *const helps[] = { "eval ppl", "eval accept", "claims" };
	char out[8192], args[64];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		CHECK_MSG(t_run(cases[i].args, out, sizeof(out)) == 2 &&
			  strstr(out, cases[i].want), "%s: \"%s\"", cases[i].args,
			  out);
	CHECK(t_run("eval frobnicate", out, sizeof(out)) == 2);
	/* inputs too short for what is asked: said, not read past (a decode's
	 * prompt beyond a short text) or aborted on (a prompt past the
	 * model's context) */
	if (t_need_models()) {
		char big[8192] = "generate --model stories260K --steps 2 --prompt '";

		t_absolute_dirs();
		t_write("one.txt", "A\n");
		CHECK_MSG(t_run("eval accept --target stories260K --draft "
				"stories260K:w4a16 --text one.txt --gamma 1 "
				"--prompts 1", out, sizeof(out)) == 2 &&
			  strstr(out, "fewer than a decode's prompt of 32"), "%s",
			  out);
		/* --gamma 0 decodes nothing: no prompt of 32 needed */
		t_write("short.txt", "Once upon a time, there was a little "
			"girl named Lily.\n");
		CHECK_MSG(t_run("eval accept --target stories260K --draft "
				"stories260K:w4a16 --text short.txt --gamma 0", out,
				sizeof(out)) == 0 && strstr(out, "alpha greedy"),
			  "%s", out);
		/* a folder for a text, a NUL byte in one: said, not "no text"
		 * or a line cut short */
		CHECK_MSG(t_run("eval ppl --model stories260K --text .", out,
				sizeof(out)) == 2 && strstr(out, "cannot read: Is a "
							    "directory"), "%s", out);
		{
			FILE *f = fopen(t_write("nul.txt", "Once"), "a");

			fputc('\0', f);
			fputs(" upon a time\nthere was\n", f);
			fclose(f);
		}
		CHECK_MSG(t_run("eval ppl --model stories260K --text nul.txt", out,
				sizeof(out)) == 2 && strstr(out, "holds a NUL byte"),
			  "%s", out);
		for (int i = 0; i < 300; i++) /* some 1,200 tokens */
			strcat(big, "the dog ");
		strcat(big, "'");
		CHECK_MSG(t_run(big, out, sizeof(out)) == 2 &&
			  strstr(out, "--prompt: ") &&
			  strstr(out, "more than stories260K's context of"), "%s",
			  out);
		/* more steps than the context holds: said, and the context's */
		CHECK_MSG(t_run("generate --model stories260K --steps 600", out,
				sizeof(out)) == 0 &&
			  strstr(out, "--steps 600 is more than stories260K's "
				 "context: 512 tokens at most"), "%s", out);
	}
	for (size_t i = 0; i < sizeof(helps) / sizeof(helps[0]); i++) {
		snprintf(args, sizeof(args), "%s --help", helps[i]);
		CHECK_MSG(t_run(args, out, sizeof(out)) == 0 &&
			  strstr(out, "\nexit status: 0 "),
			  "'%s' gives no exit statuses", args);
	}
}

/* More tenants than this machine can hold: refused before any is
 * allocated, exit 2, nothing left behind (no results, no temporary). */
static void too_many_tenants(void)
{
	char out[4096], args[2 * PATH_MAX];

	if ((double)sysconf(_SC_PHYS_PAGES) * sysconf(_SC_PAGESIZE) > 100e9) {
		t_skip("this machine holds 10^8 tenants' state (over 100 GB)");
		return;
	}
	snprintf(args, sizeof(args), "run %s -o big --set "
		 "/tenants/0/count=100000000", small());
	CHECK(t_run(args, out, sizeof(out)) == 2);
	CHECK_MSG(strstr(out, "tenants need at least") &&
		  strstr(out, "GB: simulate fewer tenants"), "%s", out);
	snprintf(args, sizeof(args), "test -z \"$(ls -A '%s')\"", t_tmpdir());
	CHECK_MSG(system(args) == 0, "something was left in the folder");
}

/* What run is asked twice, or both ways, it refuses: a seed by --seed
 * and by --set, JSON and silence. */
static void run_contradictions(void)
{
	char out[4096], args[2 * PATH_MAX];

	snprintf(args, sizeof(args), "run %s -o r --seed 5 --set /seed=7",
		 small());
	CHECK(t_run(args, out, sizeof(out)) == 2 &&
	      strstr(out, "--seed 5 and --set /seed=7 both give the seed"));
	snprintf(args, sizeof(args), "run %s -o r --json --quiet", small());
	CHECK(t_run(args, out, sizeof(out)) == 2 &&
	      strstr(out, "--json and --quiet cannot be given together"));
	CHECK(!t_exists("r"));
}

const struct tcase cli_tests[] = {
	{ "cli: formulas --check passes within 1% in regime", formulas_check },
	{ "cli: formulas for a config", formulas_for_config },
	{ "cli: every committed config is valid", committed_configs },
	{ "cli: bad simulation input exits 2 with no results", run_bad_input },
	{ "cli: a results folder's config reruns from anywhere",
	  resolved_reruns },
	{ "cli: more tenants than the machine holds exit 2, nothing left",
	  too_many_tenants },
	{ "cli: run refuses a seed given twice and --json with --quiet",
	  run_contradictions },
	{ "cli: run is byte-identical for a seed, trace included",
	  run_deterministic },
	{ "cli: run matches the golden summary", run_golden },
	{ "cli: a busy GPU's steady share is at most 1", run_busy_share },
	{ "cli: SIGTERM or SIGHUP stops a run and leaves nothing behind",
	  run_interrupted },
	{ "cli: bad configs exit 2 with the message and no results",
	  bad_configs },
	{ "cli: a long run shows its progress", run_progress },
	{ "cli: a warm-up past the run's end is a warning",
	  run_warmup_outlasts },
	{ "cli: rate tables of inexact periods run to their end",
	  rate_tables_run },
	{ "cli: config -o writes the resolved config whole", writes_resolved },
	{ "cli: a run killed outright leaves a temporary its folder's next run "
	  "removes", removes_stale_temporary },
	{ "cli: -o is checked again before the results are put in place",
	  rechecked_at_commit },
	{ "cli: usage errors and --help", usage_errors },
	{ "cli: run --columns names every figure of summary.json",
	  columns_cover_summary },
	{ "cli: calib -o replaces only its own files; a failed write to "
	  "standard output is an error", calib_out },
	{ "cli: --version, and every command's exit statuses", version_and_help },
	{ "cli: every option a help lists is in its usage", usage_lists_options },
	{ "cli: bench engine --json prints its rows", bench_engine_json },
	{ "cli: bench kernels --row-kernels times them beside the panels",
	  bench_kernels_rows },
	{ "cli: calib, eval and bench kernels refuse bad input before long work",
	  calib_bad_input },
	{ "cli: serve, edge, eval, generate and claims refuse bad options",
	  model_commands_bad_options },
	{ 0 },
};
