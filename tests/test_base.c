/* test_base.c: the base layer's containers and file helpers. */
#include "harness.h"

#include "err.h"
#include "fs.h"
#include "ring.h"

#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

RING_DEFINE(iring, int)

/* Pushes and pops interleaved so that the ring wraps, then grows while
 * wrapped: values come out in the order they went in, and _at sees them
 * where a FIFO would. */
static void ring_fifo_order(void)
{
	struct iring r = { 0 };
	int next_in = 0, next_out = 0;

	for (int round = 0; round < 6; round++) {
		for (int i = 0; i < 5 + 3 * round; i++)
			iring_push(&r, next_in++);
		for (uint32_t i = 0; i < r.n; i++)
			CHECK(*iring_at(&r, i) == next_out + (int)i);
		for (int i = 0; i < 4; i++)
			CHECK(iring_pop(&r) == next_out++);
	}
	CHECK(r.n == (uint32_t)(next_in - next_out));
	CHECK((r.cap & (r.cap - 1)) == 0 && r.cap >= r.n);
	while (r.n)
		CHECK(iring_pop(&r) == next_out++);
	CHECK(next_out == next_in);
	iring_release(&r);
	CHECK(r.v == NULL && r.n == 0 && r.cap == 0);
}

/* Entries in a folder, "." and ".." not counted. */
static int entries(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	int n = 0;

	while (d && (de = readdir(d)))
		n += strcmp(de->d_name, ".") && strcmp(de->d_name, "..");
	if (d)
		closedir(d);
	return n;
}

/* fs_atomic: the target appears whole on commit, and an abort leaves
 * neither target nor temporary; fs_slurp reads back what was written;
 * fs_mkdirs makes a chain of folders and accepts one that exists. */
static void fs_whole_files(void)
{
	const char *dir = t_tmpdir();
	char path[1100], deep[1024];
	struct fs_atomic a;
	struct err e;
	struct stat st;
	size_t len;
	char *text;

	snprintf(deep, sizeof(deep), "%s/a/b/c", dir);
	CHECK_MSG(fs_mkdirs(deep, &e) == 0, "%s", e.msg);
	CHECK(stat(deep, &st) == 0 && S_ISDIR(st.st_mode));
	CHECK_MSG(fs_mkdirs(deep, &e) == 0, "%s", e.msg);
	snprintf(path, sizeof(path), "%s/x.txt", deep);
	CHECK(fs_atomic_open(&a, path, &e) != NULL);
	fputs("half", a.f);
	fs_atomic_abort(&a);
	CHECK(entries(deep) == 0);
	CHECK_MSG(fs_write_atomic(path, "whole\n", &e) == 0, "%s", e.msg);
	CHECK(entries(deep) == 1);
	text = fs_slurp(path, &len);
	CHECK(text && len == 6 && !strcmp(text, "whole\n"));
	free(text);
	CHECK(fs_slurp("/nonexistent/x", NULL) == NULL);
	snprintf(path, sizeof(path), "%s/a/b/c/x.txt/below", dir);
	CHECK(fs_mkdirs(path, &e) < 0 && strstr(e.msg, "cannot make"));
	snprintf(path, sizeof(path), "%s/none/x.txt", dir);
	CHECK(fs_write_atomic(path, "x", &e) < 0 && strstr(e.msg, "cannot write"));
}

const struct tcase base_tests[] = {
	{ "base: a ring keeps FIFO order through wrapping and growth",
	  ring_fifo_order },
	{ "base: whole files, folders, atomic writes", fs_whole_files },
	{ 0 },
};
