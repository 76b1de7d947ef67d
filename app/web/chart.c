/*
 * The bar chart (chart.h). The drawing is in viewBox units: each bar has
 * a slot of SLOT units, bars grow up from the baseline at TOP + HEIGHT,
 * the tallest reaches TOP. The stylesheet scales the whole to the width
 * of its box.
 */
#include <stdio.h>
#include <string.h>

#include "../lib/buf.h"
#include "../lib/common.h"
#include "chart.h"
#include "fmt.h"
#include "tmpl.h"

#define SLOT 10
#define BAR 8
#define TOP 12
#define HEIGHT 100
#define BOTTOM 16 /* room for the ticks */
#define LEFT 2

int
chart_bars(struct buf *out, const int64_t *v, size_t n, const char *const *tip,
    const char *const *tick, const char *labelledby)
{
	char max_s[FMT_COUNT_MAX];
	int64_t max = 0, h;
	size_t i, width;

	if (n == 0 || n > CHART_BARS_MAX)
		return -1;
	for (i = 0; i < n; i++)
		if (v[i] > max)
			max = v[i];
	width = LEFT * 2 + n * SLOT;
	buf_printf(out,
	    "<svg class=\"chart\" viewBox=\"0 0 %zu %d\" role=\"img\" "
	    "aria-labelledby=\"",
	    width, TOP + HEIGHT + BOTTOM);
	tmpl_escape(out, labelledby);
	buf_puts(out, "\" xmlns=\"http://www.w3.org/2000/svg\">");
	/* The scale: the tallest bar's value at the top line. */
	fmt_count(max, max_s);
	buf_printf(out,
	    "<line class=\"axis\" x1=\"%d\" y1=\"%d\" x2=\"%zu\" y2=\"%d\"/>"
	    "<line class=\"grid\" x1=\"%d\" y1=\"%d\" x2=\"%zu\" y2=\"%d\"/>"
	    "<text class=\"tick\" x=\"%d\" y=\"%d\">%s</text>",
	    LEFT, TOP + HEIGHT, width - LEFT, TOP + HEIGHT, LEFT, TOP,
	    width - LEFT, TOP, LEFT, TOP - 3, max_s);
	for (i = 0; i < n; i++) {
		int64_t x = LEFT + (int64_t)i * SLOT + (SLOT - BAR) / 2;

		/* Rounded up (in floating point: a count times HEIGHT may
		 * not fit 64 bits): a day with one redemption is never drawn
		 * as a day with none. */
		h = 0;
		if (v[i] > 0 && max > 0) {
			double r = (double)v[i] * HEIGHT / (double)max;

			h = (int64_t)r;
			if ((double)h < r)
				h++;
			if (h < 1)
				h = 1;
			if (h > HEIGHT)
				h = HEIGHT;
		}
		buf_printf(out,
		    "<rect class=\"%s\" x=\"%lld\" y=\"%lld\" width=\"%d\" "
		    "height=\"%lld\"><title>",
		    h > 0 ? "bar" : "bar-zero", (long long)x,
		    (long long)(TOP + HEIGHT - (h > 0 ? h : 1)), BAR,
		    (long long)(h > 0 ? h : 1));
		tmpl_escape(out, tip != NULL && tip[i] != NULL ? tip[i] : "");
		buf_puts(out, "</title></rect>");
		if (tick != NULL && tick[i] != NULL) {
			/* The first and last ticks stay inside the box. */
			const char *anchor = "middle";
			int64_t tx = x + BAR / 2;

			if (i == 0) {
				anchor = "start";
				tx = x;
			} else if (i == n - 1) {
				anchor = "end";
				tx = x + BAR;
			}
			buf_printf(out,
			    "<text class=\"tick\" x=\"%lld\" y=\"%d\" "
			    "text-anchor=\"%s\">",
			    (long long)tx, TOP + HEIGHT + BOTTOM - 4, anchor);
			tmpl_escape(out, tick[i]);
			buf_puts(out, "</text>");
		}
	}
	buf_puts(out, "</svg>");
	return 0;
}
