/* fs.c: whole-file helpers. An fs_atomic owns its temporary from open to
 * commit or abort; the temporary is in the target's folder, so that the
 * rename cannot cross file systems, and its name starts with a dot. */
#define _XOPEN_SOURCE 700 /* realpath */
#include "fs.h"

#include "err.h"
#include "mem.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

char *fs_slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *text = NULL;
	size_t n = 0, cap = 0, got;
	int bad;

	if (!f)
		return NULL;
	errno = 0;
	do {
		if (n + 4096 + 1 > cap)
			text = xrealloc(text, cap = 2 * cap + 4096 + 1);
		got = fread(text + n, 1, cap - n - 1, f);
		n += got;
	} while (got > 0 && n <= FS_SLURP_MAX);
	/* the read's own reason (EISDIR: a folder), else EIO; past the
	 * bound (/dev/zero), EFBIG */
	bad = ferror(f) ? (errno ? errno : EIO) : n > FS_SLURP_MAX ? EFBIG : 0;
	fclose(f);
	if (bad) {
		free(text);
		errno = bad;
		return NULL;
	}
	text[n] = '\0';
	if (len)
		*len = n;
	return text;
}

int fs_mkdirs(const char *path, struct err *e)
{
	char *p = xstrdup(path);
	int rc = 0;

	for (char *s = p + 1;; s++) {
		char c = *s;

		if (c != '/' && c)
			continue;
		*s = '\0';
		if (mkdir(p, 0777) < 0 && errno != EEXIST) {
			rc = err_set(e, "cannot make '%s': %s", p, strerror(errno));
			break;
		}
		*s = c;
		if (!c)
			break;
	}
	free(p);
	return rc;
}

int fs_writable(const char *path, struct err *e)
{
	const char *slash = strrchr(path, '/');
	char dir[4096];
	struct stat st;

	if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
		return err_set(e, "'%s' is a folder: a file's name was expected",
			       path);
	if (!slash)
		snprintf(dir, sizeof(dir), ".");
	else /* "/NAME": the root */
		snprintf(dir, sizeof(dir), "%.*s",
			 slash == path ? 1 : (int)(slash - path), path);
	if (stat(dir, &st) < 0)
		return err_set(e, "cannot write '%s': its folder '%s': %s", path,
			       dir, strerror(errno));
	if (!S_ISDIR(st.st_mode))
		return err_set(e, "cannot write '%s': '%s' is not a folder", path,
			       dir);
	if (access(dir, W_OK | X_OK) < 0)
		return err_set(e, "cannot write '%s': its folder '%s': %s", path,
			       dir, strerror(errno));
	return 0;
}

FILE *fs_atomic_open(struct fs_atomic *a, const char *path, struct err *e)
{
	const char *slash = strrchr(path, '/');
	int dir = slash ? (int)(slash - path + 1) : 0;
	size_t n = strlen(path) + 32;

	a->path = xstrdup(path);
	a->tmp = xmalloc(n);
	/* the name cut to 200 bytes: the temporary's must fit NAME_MAX too */
	snprintf(a->tmp, n, "%.*s.%.200s.tmp-%ld", dir, path, path + dir,
		 (long)getpid());
	if (!(a->f = fopen(a->tmp, "w"))) {
		err_set(e, "cannot write '%s': %s (through '%s')", path,
			strerror(errno), a->tmp);
		free(a->tmp);
		free(a->path);
		*a = (struct fs_atomic){ 0 };
	}
	return a->f;
}

int fs_atomic_commit(struct fs_atomic *a, struct err *e)
{
	int bad = ferror(a->f), rc = 0;

	if (fclose(a->f) != 0 || bad)
		rc = err_set(e, "cannot write '%s': %s (through '%s')", a->path,
			     strerror(bad ? EIO : errno), a->tmp);
	else if (rename(a->tmp, a->path) < 0)
		rc = err_set(e, "cannot rename '%s' to '%s': %s", a->tmp,
			     a->path, strerror(errno));
	if (rc < 0)
		remove(a->tmp);
	free(a->tmp);
	free(a->path);
	*a = (struct fs_atomic){ 0 };
	return rc;
}

void fs_atomic_abort(struct fs_atomic *a)
{
	fclose(a->f);
	remove(a->tmp);
	free(a->tmp);
	free(a->path);
	*a = (struct fs_atomic){ 0 };
}

int fs_write_atomic(const char *path, const char *text, struct err *e)
{
	struct fs_atomic a;

	if (!fs_atomic_open(&a, path, e))
		return -1;
	fputs(text, a.f);
	return fs_atomic_commit(&a, e);
}

int fs_dir_empty(const char *path)
{
	DIR *d = opendir(path);
	struct dirent *ent;
	int empty = d != NULL;

	while (d && (ent = readdir(d)))
		if (strcmp(ent->d_name, ".") && strcmp(ent->d_name, "..")) {
			empty = 0;
			break;
		}
	if (d)
		closedir(d);
	return empty;
}

bool fs_is_dir(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* path's folder resolved (realpath), then its last component; NULL where
 * the folder cannot be resolved. Caller frees. */
static char *resolved_name(const char *path)
{
	const char *slash = strrchr(path, '/');
	char *dir = slash ? xstrdup(path) : xstrdup("."), *real, *out;

	if (slash)
		dir[slash - path + (slash == path)] = '\0';
	real = realpath(dir, NULL);
	free(dir);
	if (!real)
		return NULL;
	out = xmalloc(strlen(real) + strlen(path) + 2);
	sprintf(out, "%s/%s", real, slash ? slash + 1 : path);
	free(real);
	return out;
}

bool fs_same_file(const char *a, const char *b)
{
	struct stat sa, sb;
	char *ra, *rb;
	bool same;

	if (!strcmp(a, b))
		return true;
	if (stat(a, &sa) == 0 && stat(b, &sb) == 0)
		return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
	ra = resolved_name(a);
	rb = resolved_name(b);
	same = ra && rb && !strcmp(ra, rb);
	free(ra);
	free(rb);
	return same;
}

int fs_exe_dir(char *buf, size_t n)
{
	ssize_t len = readlink("/proc/self/exe", buf, n - 1);
	char *slash;

	if (len < 0 || (size_t)len >= n - 1)
		return -1;
	buf[len] = 0;
	if ((slash = strrchr(buf, '/')))
		*slash = 0;
	return 0;
}

const char *fs_repo_dir(const char *rel, char *buf, size_t n)
{
	char exe[4096];
	struct stat st;

	if (stat(rel, &st) == 0 || fs_exe_dir(exe, sizeof(exe)) < 0)
		snprintf(buf, n, "%s", rel);
	else
		snprintf(buf, n, "%s/../%s", exe, rel);
	return buf;
}

void fs_skip_bom(FILE *f)
{
	long at = ftell(f);
	char b[3];

	if (fread(b, 1, 3, f) == 3 && !memcmp(b, FS_BOM, 3))
		return;
	if (at < 0 || fseek(f, at, SEEK_SET) != 0)
		clearerr(f); /* a pipe: the bytes read are lost to the reader,
				which then finds no text it expects */
}
