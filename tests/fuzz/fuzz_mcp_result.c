/*
 * fuzz_mcp_result.c — an MCP server's answers as flowcgi takes them: the
 * input parsed as JSON is a tools/call result turned into tool messages
 * (text, json, files), and a tools/list result turned into the tools an
 * agent is offered. Whatever the input, nothing may crash or leak, and
 * the text a result gives stays within TOOL_MAX_TEXT.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "engine/tools/tools.h"

int	LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tool_result	 r;
	json_t			*j, *tools, *desc;
	char			 err[ENGINE_ERRMAX];

	if ((j = json_loadb((const char *)data, size, 0, NULL)) == NULL)
		return 0;
	memset(&r, 0, sizeof(r));
	if (mcp_call_result(j, "t", err, &r) == 0 && r.text.len >
	    TOOL_MAX_TEXT)
		abort();
	tool_result_release(&r);
	tools = mcp_tools_of(j);
	desc = mcp_tools_describe(tools);
	if (tools != NULL && desc != NULL && json_array_size(tools) !=
	    json_array_size(desc))
		abort();
	json_decref(desc);
	json_decref(tools);
	json_decref(j);
	return 0;
}
