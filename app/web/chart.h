/*
 * A bar chart as inline SVG, drawn on the server: no script, no library.
 * Colours and type come from the stylesheet (classes chart, bar,
 * bar-zero, axis, tick), since the CSP forbids inline styles.
 */
#ifndef CHART_H
#define CHART_H

#include <stddef.h>
#include <stdint.h>

struct buf;

#define CHART_BARS_MAX 366

/*
 * Appends <svg ...>...</svg> with one bar per value (values below 0 count
 * as 0). tip[i] is bar i's tooltip (<title>, escaped here); tick[i], when
 * not NULL, is written under bar i (escaped). labelledby is the id of the
 * element that names the chart. -1 (nothing written) for n of 0 or past
 * CHART_BARS_MAX; buffer failures are out->err, as always.
 */
int chart_bars(struct buf *out, const int64_t *v, size_t n,
    const char *const *tip, const char *const *tick, const char *labelledby);

#endif
