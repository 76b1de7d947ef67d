/*
 * One line per event on standard error, with control characters escaped
 * so a hostile value cannot forge lines. Never log a code, key or token in
 * full: log_redact keeps the first characters only.
 */
#ifndef LOG_H
#define LOG_H

enum log_level { LOG_ERR, LOG_WARN, LOG_INFO, LOG_DEBUG, LOG__MAX };

void log_set_level(enum log_level);
void log_msg(enum log_level, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Writes at most 4 characters of s and "..." into out (16 bytes). */
const char *log_redact(const char *s, char out[16]);

#define log_err(...) log_msg(LOG_ERR, __VA_ARGS__)
#define log_warn(...) log_msg(LOG_WARN, __VA_ARGS__)
#define log_info(...) log_msg(LOG_INFO, __VA_ARGS__)

#endif
