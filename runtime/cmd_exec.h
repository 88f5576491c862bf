/* cmd_exec.h - the command line of `nsrun exec` (the work is exec_join.h's). */
#ifndef NSRUN_CMD_EXEC_H
#define NSRUN_CMD_EXEC_H

/* nsrun exec [-e KEY[=VAL]] [-w DIR] [-u UID[:GID]] [-i] NAME [--] CMD [ARG...]:
 * argv[1] is "exec".  Returns the exit status: the command's (docker exec's
 * table), or 125 after printing nsrun's error. */
int exec_main(int argc, char **argv);

/* The usage lines of nsrun exec, for --help. */
extern const char exec_usage_text[];

#endif
