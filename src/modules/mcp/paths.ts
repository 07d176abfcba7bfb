/** Where MCP is served (the auth hook needs it without the MCP module). */
export const MCP_PATH = '/mcp'
