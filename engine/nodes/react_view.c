/*
 * react_view.c — what of a ReAct agent's answer shows as it streams, as
 * Dify's CotAgentOutputParser.handle_react_stream_output lets it through
 * (api/core/agent/output_parser/cot_output_parser.py): the text outside
 * ``` fences and {...} blobs (the action), without the "Thought:" and
 * "Action:" markers. A byte machine fed piece by piece, so a marker or a
 * fence split across two pieces of the stream is seen whole.
 */
#include "engine/nodes/nodes.h"

void
react_view(struct react_view *v, const char *p, size_t n, struct dbuf *out)
{
	size_t	i;
	char	ch, lc;

	for (i = 0; i < n; i++) {
		ch = p[i];
		if (v->mark != NULL && (ch == '`' || ch == '{')) {
			dbuf_add(out, v->held, v->nheld);
			v->mark = NULL;
		}
		if (ch == '`' && v->depth == 0) {
			if (++v->ticks == 3) {
				v->in_code = !v->in_code;
				v->ticks = 0;
			}
			continue;
		}
		if (v->ticks > 0 && !v->in_code)
			dbuf_add(out, "``", (size_t)v->ticks);
		v->ticks = 0;
		if (v->in_code)
			continue;
		if (ch == '{' || v->depth > 0) {
			if (ch == '{')
				v->depth++;
			else if (ch == '}')
				v->depth--;
			continue;
		}
		lc = ch >= 'A' && ch <= 'Z' ? (char)(ch + 32) : ch;
		if (v->mark != NULL) {
			if (lc == v->mark[v->nheld]) {
				v->held[v->nheld++] = ch;
				if (v->mark[v->nheld] == '\0')
					v->mark = NULL;	/* dropped */
				v->last = ch;
				continue;
			}
			/* not the marker: its first bytes show after all */
			dbuf_add(out, v->held, v->nheld);
			v->mark = NULL;
		} else if ((lc == 't' || lc == 'a') && (v->last == '\0' ||
		    v->last == ' ' || v->last == '\n')) {
			v->mark = lc == 't' ? "thought:" : "action:";
			v->held[0] = ch;
			v->nheld = 1;
			v->last = ch;
			continue;
		}
		dbuf_addc(out, ch);
		v->last = ch;
	}
}
