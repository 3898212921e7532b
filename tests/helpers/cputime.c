/*
 * cputime: runs a command and prints the CPU time (user + sys, to the
 * microsecond) it and its children used, and its peak RSS, for `make bench`
 * (GNU time prints only hundredths; a fork from an interpreter charges the
 * child its own set-up).
 *
 *   cputime OUT CMD ARGS...	CMD's stdout to OUT; prints "SECONDS PEAK_KIB"
 *
 * Exits with CMD's status (1 if it cannot run).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: cputime OUT CMD [ARGS...]\n");
		return 2;
	}
	int out = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (out < 0) {
		fprintf(stderr, "cputime: %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	pid_t pid = fork();
	if (pid < 0) {
		perror("cputime: fork");
		return 1;
	}
	if (pid == 0) {
		dup2(out, STDOUT_FILENO);
		execvp(argv[2], argv + 2);
		fprintf(stderr, "cputime: %s: %s\n", argv[2], strerror(errno));
		_exit(127);
	}
	close(out);
	int status;
	struct rusage ru;
	while (wait4(pid, &status, 0, &ru) < 0)
		if (errno != EINTR) {
			perror("cputime: wait4");
			return 1;
		}
	printf("%.6f %ld\n", ru.ru_utime.tv_sec + ru.ru_stime.tv_sec +
	       (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6, ru.ru_maxrss);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
