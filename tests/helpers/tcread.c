/*
 * tcread: reads every record of a trace-cmd file with libtracecmd's own
 * reader (tracecmd_read_next_data) and prints the count, so `make bench`
 * can show its time and memory on zstd v7 files next to ours.
 */
#include <stdio.h>

#include <trace-cmd.h>

/* Exported by libtracecmd 3.1 but missing from its public header. */
struct tep_record *tracecmd_read_next_data(struct tracecmd_input *handle, int *rec_cpu);

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: tcread TRACE.dat\n");
		return 2;
	}
	struct tracecmd_input *h = tracecmd_open(argv[1], TRACECMD_FL_LOAD_NO_PLUGINS);
	if (!h) {
		fprintf(stderr, "tcread: cannot open %s\n", argv[1]);
		return 1;
	}
	unsigned long long n = 0;
	struct tep_record *r;
	int cpu;
	while ((r = tracecmd_read_next_data(h, &cpu))) {
		n++;
		tracecmd_free_record(r);
	}
	printf("%llu\n", n);
	tracecmd_close(h);
	return 0;
}
