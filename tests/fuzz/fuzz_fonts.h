/*
 * fuzz_fonts.h — releases the font caches of Pango, cairo and fontconfig
 * at exit, so that LeakSanitizer reports only real leaks (their size
 * stays the same from one input to the next):
 *
 *	atexit(fuzz_fonts_release);	(after the first text is drawn)
 *
 * cairo_debug_reset_static_data() asserts that no cairo font is alive.
 * The default font map's last reference is not always the caller's:
 * Pango loads fontconfig in a thread of its own, which holds the map
 * until it ends, and ends late on a loaded machine. A toggle reference
 * says when all others are gone; the map is then freed here, and the
 * caches reset. When that does not happen within FUZZ_FONTS_WAIT_S the
 * caches are left as they are (a leak report, never an abort).
 */
#ifndef FLOWCGI_FUZZ_FONTS_H
#define FLOWCGI_FUZZ_FONTS_H

#include <stdio.h>

#include <cairo.h>
#include <fontconfig/fontconfig.h>
#include <pango/pangocairo.h>

#define FUZZ_FONTS_WAIT_S	30

static GMutex	fuzz_fonts_mu;
static GCond	fuzz_fonts_cond;
static int	fuzz_fonts_alone;

static void
fuzz_fonts_toggled(gpointer data, GObject *obj, gboolean is_last_ref)
{
	(void)data;
	(void)obj;
	g_mutex_lock(&fuzz_fonts_mu);
	fuzz_fonts_alone = is_last_ref;
	g_cond_signal(&fuzz_fonts_cond);
	g_mutex_unlock(&fuzz_fonts_mu);
}

static void
fuzz_fonts_release(void)
{
	GObject	*map = G_OBJECT(pango_cairo_font_map_get_default());
	gint64	 until;
	int	 alone;

	g_object_add_toggle_ref(map, fuzz_fonts_toggled, NULL);
	pango_cairo_font_map_set_default(NULL);
	until = g_get_monotonic_time() + FUZZ_FONTS_WAIT_S * G_TIME_SPAN_SECOND;
	g_mutex_lock(&fuzz_fonts_mu);
	while (!fuzz_fonts_alone &&
	    g_cond_wait_until(&fuzz_fonts_cond, &fuzz_fonts_mu, until))
		;
	alone = fuzz_fonts_alone;
	g_mutex_unlock(&fuzz_fonts_mu);
	if (!alone) {
		fprintf(stderr, "fuzz_fonts_release: the font map is still "
		    "held after %d s; caches left\n", FUZZ_FONTS_WAIT_S);
		return;
	}
	g_object_remove_toggle_ref(map, fuzz_fonts_toggled, NULL);
	cairo_debug_reset_static_data();
	FcFini();
}

#endif
