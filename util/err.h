/*
 * err: the one error-message buffer an operation fills in.
 *
 * Functions that can fail take a `struct ta_err *` and return -1 (or NULL)
 * after err_set(); the caller decides whether and how to print.  `code` is
 * the exit status class the failure maps to: EXIT_BAD_INPUT (2) for bad
 * usage or bad input, EXIT_FAILURE_RUN (1) for everything else.
 */
#ifndef TA_ERR_H
#define TA_ERR_H

enum { EXIT_OK = 0, EXIT_FAILURE_RUN = 1, EXIT_BAD_INPUT = 2 };

struct ta_err {
	int code;
	char msg[4096];		/* room for a config's 20 errors, one a line */
};

/* Sets the message (printf-style) and the code; always returns -1. */
int err_set(struct ta_err *e, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Puts "prefix: " in front of the current message. */
void err_prefix(struct ta_err *e, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void err_clear(struct ta_err *e);

/*
 * The exit class of a failure to open a file the user named: bad input
 * (EXIT_BAD_INPUT) when the name leads nowhere — missing, a symlink loop,
 * a component that is not a directory, too long, a directory — else
 * EXIT_FAILURE_RUN (permission, I/O, resources).
 */
int err_open_code(int errnum);

#endif
