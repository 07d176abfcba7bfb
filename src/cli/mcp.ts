import { API_KEY_PATTERN } from '../config.ts'
import { MCP_PATH } from '../modules/mcp/paths.ts'
import { type Command, expectArguments, UsageError } from './command.ts'

/** Where `intake mcp` reads its key when --key is not given: a flag is visible to everyone on the machine (ps). */
const MCP_KEY_VARIABLE = 'INTAKE_API_KEY'

export const mcpCommand: Command = {
  name: 'mcp',
  about: `serve intake's MCP tools over stdio, for desktop MCP clients that
start a command. Every call is forwarded to a running intake's /mcp with the
key, so the tools are exactly the server's. Stdout carries the protocol.`,
  usage: [{ line: 'mcp --url URL [--key KEY]' }],
  summary: `Serve the MCP tools over stdio, forwarding to a running intake
(the key from ${MCP_KEY_VARIABLE}; --key, when given, wins).`,
  details: `  --url   the address of a running intake, e.g. http://127.0.0.1:8080
  --key   an API key (svc_live_ and 48 hex characters). Without it the key
          is read from the environment, ${MCP_KEY_VARIABLE}: prefer that, since
          every user of the machine can read a command's flags (ps). When
          both are given, --key wins.`,
  examplesHeading: "Example (a client's configuration, the key in the command's environment):",
  examples: [
    `{ "mcpServers": { "intake": { "command": "intake",
    "args": ["mcp", "--url", "http://127.0.0.1:8080"],
    "env": { "${MCP_KEY_VARIABLE}": "svc_live_..." } } } }`,
  ],
  run({ args, options }) {
    expectArguments(args, 0, 'mcp --url URL [--key KEY]')
    const { key, from } = mcpKey(options.key, process.env)
    const url = options.url
    if (!url || !/^https?:\/\/[^\s]+$/.test(url) || !URL.canParse(url)) {
      throw new UsageError('intake mcp needs --url, the http(s) address of a running intake (see intake --help)')
    }
    if (!key)
      throw new UsageError(
        `intake mcp needs an API key: set ${MCP_KEY_VARIABLE} (or give --key) to svc_live_ followed by 48 hex characters`,
      )
    // Never echo a key, even a wrong one.
    if (!API_KEY_PATTERN.test(key))
      throw new UsageError(
        `intake mcp needs an API key, and ${from} is not one: svc_live_ followed by 48 hex characters`,
      )
    // Loaded only for this command: serving never carries the MCP client and stdio code.
    import('../modules/mcp/stdio.ts')
      .then(({ serveMcpOverStdio }) => serveMcpOverStdio(url, key))
      .catch((error) => {
        console.error(
          `intake: cannot reach ${url}${MCP_PATH}: ${error instanceof Error ? error.message : String(error)}`,
        )
        process.exit(2)
      })
  },
}

/** The key `intake mcp` uses and where it came from: --key when given, else the environment. */
function mcpKey(
  flag: string | undefined,
  env: Record<string, string | undefined>,
): { key: string | undefined; from: string } {
  if (flag !== undefined) return { key: flag, from: '--key' }
  const fromEnv = env[MCP_KEY_VARIABLE]?.trim()
  return { key: fromEnv === '' ? undefined : fromEnv, from: MCP_KEY_VARIABLE }
}
