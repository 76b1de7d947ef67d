/*
 * One line per event on standard error, with control characters escaped
 * so a hostile value cannot forge lines. The level comes from REDEEM_LOG
 * (error, warn, info, debug; default warn). Never log a code, key or
 * token.
 */
#ifndef LOG_H
#define LOG_H

enum log_level { LOG_ERR, LOG_WARN, LOG_INFO, LOG_DEBUG, LOG__MAX };

void log_msg(enum log_level, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#define log_err(...) log_msg(LOG_ERR, __VA_ARGS__)
#define log_warn(...) log_msg(LOG_WARN, __VA_ARGS__)
#define log_info(...) log_msg(LOG_INFO, __VA_ARGS__)

#endif
