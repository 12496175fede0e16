/*
 * replay.c — runs a fuzz target over files (or every file in directories)
 * outside libFuzzer, so `make check` replays the seed corpora under the
 * normal and the ASan build. Prints one TAP line per target.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int	LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int
replay_file(const char *path)
{
	FILE	*f;
	uint8_t	*buf;
	long	 n;

	if ((f = fopen(path, "rb")) == NULL)
		return -1;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	if (n < 0 || (buf = malloc((size_t)n + 1)) == NULL) {
		fclose(f);
		return -1;
	}
	if (fread(buf, 1, (size_t)n, f) != (size_t)n) {
		free(buf);
		fclose(f);
		return -1;
	}
	fclose(f);
	LLVMFuzzerTestOneInput(buf, (size_t)n);
	free(buf);
	return 0;
}

int
main(int argc, char **argv)
{
	struct stat	 st;
	struct dirent	*de;
	DIR		*d;
	char		 path[4096];
	int		 i, n = 0, bad = 0;

	for (i = 1; i < argc; i++) {
		if (stat(argv[i], &st) != 0) {
			bad++;
			continue;
		}
		if (!S_ISDIR(st.st_mode)) {
			bad += replay_file(argv[i]) != 0;
			n++;
			continue;
		}
		if ((d = opendir(argv[i])) == NULL) {
			bad++;
			continue;
		}
		while ((de = readdir(d)) != NULL) {
			if (de->d_name[0] == '.')
				continue;
			snprintf(path, sizeof(path), "%s/%s", argv[i],
			    de->d_name);
			bad += replay_file(path) != 0;
			n++;
		}
		closedir(d);
	}
	/* Reaching here means no input crashed the target. */
	printf("%s 1 - replayed %d seeds without a crash\n1..1\n",
	    bad == 0 && n > 0 ? "ok" : "not ok", n);
	return bad == 0 && n > 0 ? 0 : 1;
}
