/* prov.c: provenance from the running system: /proc/cpuinfo for the CPU,
 * sysconf for cores and memory, git (if it answers) for the commit. */
#define _DEFAULT_SOURCE /* gethostname, popen */
#include "prov.h"

#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static void cpu_model(char *buf, size_t n)
{
	char line[512];
	FILE *f = fopen("/proc/cpuinfo", "r");

	snprintf(buf, n, "unknown CPU");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char *c = strchr(line, ':');

		if (c && (!strncmp(line, "model name", 10) ||
			  !strncmp(line, "Model", 5))) {
			c += 1 + strspn(c + 1, " \t");
			c[strcspn(c, "\n")] = '\0';
			snprintf(buf, n, "%s", c);
			break;
		}
	}
	fclose(f);
}

static void git_commit(char *buf, size_t n)
{
	FILE *p = popen("git describe --always --dirty 2>/dev/null", "r");

	snprintf(buf, n, "unknown");
	if (!p)
		return;
	if (fgets(buf, (int)n, p))
		buf[strcspn(buf, "\n")] = '\0';
	if (pclose(p) != 0 || !*buf)
		snprintf(buf, n, "unknown");
}

static const char *build_commit; /* prov_set_build's, or NULL */

void prov_set_build(const char *commit)
{
	build_commit = commit;
}

json_t *prov_new(int argc, char **argv)
{
	char host[256] = "unknown", cpu[256], commit[128], date[32],
	     machine[640], cmd[4096] = "hybridspec";
	time_t now = time(NULL);
	struct tm tm;
	size_t at = strlen(cmd);

	gethostname(host, sizeof(host) - 1);
	cpu_model(cpu, sizeof(cpu));
	git_commit(commit, sizeof(commit));
	gmtime_r(&now, &tm);
	strftime(date, sizeof(date), "%Y-%m-%dT%H:%M:%SZ", &tm);
	snprintf(machine, sizeof(machine), "%s: %s, %ld CPUs online, %.0f GiB",
		 host, cpu, sysconf(_SC_NPROCESSORS_ONLN),
		 (double)sysconf(_SC_PHYS_PAGES) * sysconf(_SC_PAGESIZE) /
			 (1 << 30));
	for (int i = 0; i < argc && at + 1 < sizeof(cmd); i++)
		at += (size_t)snprintf(cmd + at, sizeof(cmd) - at, " %s",
				       argv[i]);
	json_t *p = json_pack("{s:s,s:s,s:s,s:s,s:s}", "machine", machine,
			      "cpu", cpu, "date", date, "commit", commit,
			      "command", cmd);

	if (build_commit)
		json_object_set_new(p, "build", json_string(build_commit));
	return p;
}
