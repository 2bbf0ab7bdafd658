/* harness.c: the runner and helpers behind harness.h (libc only, so that
 * the kernel tests also build for aarch64 and run under qemu). */
#define _DEFAULT_SOURCE /* realpath, mkdtemp */
#include "harness.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

int t_failures;
static char tmp_root[] = "/tmp/hybridspec-test-XXXXXX";
static char case_dir[512];
static int case_no;

void t_fail(const char *file, int line, const char *fmt, ...)
{
	va_list ap;

	t_failures++;
	fprintf(stderr, "    %s:%d: ", file, line);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

const char *t_tmpdir(void)
{
	return case_dir;
}

const char *t_write(const char *name, const char *text)
{
	static char paths[8][600];
	static int k;
	char *p = paths[k++ % 8];
	FILE *f;

	snprintf(p, sizeof(paths[0]), "%s/%s", case_dir, name);
	f = fopen(p, "w");
	if (!f) {
		perror(p);
		exit(2);
	}
	fputs(text, f);
	fclose(f);
	return p;
}

int t_exists(const char *name)
{
	char p[1024];
	struct stat st;

	snprintf(p, sizeof(p), "%s/%s", case_dir, name);
	return stat(p, &st) == 0;
}

long t_dead_pid(void)
{
	pid_t pid = fork();

	if (pid == 0)
		_exit(0);
	waitpid(pid, NULL, 0);
	return (long)pid;
}

char *t_slurp(const char *name)
{
	char p[2048];
	FILE *f;
	long n;
	char *s;

	snprintf(p, sizeof(p), "%s/%s", case_dir, name);
	if (!(f = fopen(p, "rb")))
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	s = malloc((size_t)n + 1);
	if (fread(s, 1, (size_t)n, f) != (size_t)n)
		n = 0;
	s[n] = '\0';
	fclose(f);
	return s;
}

int t_run(const char *args, char *out, size_t n)
{
	const char *bin = getenv("HYBRIDSPEC_BIN");
	char cmd[4096], outfile[600];
	FILE *f;
	size_t got;
	int st;

	snprintf(outfile, sizeof(outfile), "%s/.out", case_dir);
	snprintf(cmd, sizeof(cmd), "cd '%s' && timeout -k 10 %d '%s' %s >'%s' "
		 "2>&1", case_dir, T_RUN_LIMIT_S, bin ? bin : "build/hybridspec",
		 args, outfile);
	st = system(cmd);
	out[0] = '\0';
	if ((f = fopen(outfile, "r"))) {
		got = fread(out, 1, n - 1, f);
		out[got] = '\0';
		fclose(f);
	}
	unlink(outfile);
	if (WIFEXITED(st) && (WEXITSTATUS(st) == 124 || WEXITSTATUS(st) == 137))
		fprintf(stderr, "    hybridspec %s: killed after %d s\n", args,
			T_RUN_LIMIT_S);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static char skip_reason[600];

void t_skip(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(skip_reason, sizeof(skip_reason), fmt, ap);
	va_end(ap);
}

int t_main(const struct tcase *const *suites, size_t n_suites, int argc,
	   char **argv)
{
	const char *only = argc > 1 ? argv[1] : NULL;
	char bin[4096];
	int passed = 0, failed = 0, skipped = 0;

	/* the binary is run from the case directory: make its path absolute */
	if (!getenv("HYBRIDSPEC_BIN") && realpath("build/hybridspec", bin))
		setenv("HYBRIDSPEC_BIN", bin, 1);
	if (!mkdtemp(tmp_root)) {
		perror("mkdtemp");
		return 2;
	}
	for (size_t s = 0; s < n_suites; s++) {
		for (const struct tcase *c = suites[s]; c->name; c++) {
			if (only && !strstr(c->name, only))
				continue;
			snprintf(case_dir, sizeof(case_dir), "%s/%d", tmp_root,
				 case_no++);
			mkdir(case_dir, 0777);
			t_failures = 0;
			skip_reason[0] = 0;
			c->fn();
			if (skip_reason[0] && !t_failures) {
				printf("skip %s: %s\n", c->name, skip_reason);
				skipped++;
			} else {
				printf("%s %s\n", t_failures ? "FAIL" : "ok  ",
				       c->name);
				if (t_failures)
					failed++;
				else
					passed++;
			}
			fflush(stdout);
		}
	}
	snprintf(bin, sizeof(bin), "rm -rf '%s'", tmp_root);
	if (system(bin) != 0)
		fprintf(stderr, "could not remove %s\n", tmp_root);
	if (skipped)
		printf("%d skipped (the reasons are above)\n", skipped);
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
