/** The words of an account's API keys page, in English (placeholders and plurals as overview.ts says). */
export const keys = {
  'keys.title': 'API keys',
  'keys.intro': 'Agents and scripts use a key in the Authorization header: Bearer followed by the key.',
  'keys.none': 'This account has no key yet.',
  'keys.hint': 'Key',
  'keys.hint_value': 'ends in {hint}',
  'keys.created': 'Created',
  'keys.last_used': 'Last used',
  'keys.never_used': 'Never',
  'keys.state': 'State',
  'keys.active': 'Active',
  'keys.revoked': 'Revoked {time}',
  'keys.revoke': 'Revoke',
  'keys.revoke_key': 'Revoke the key ending in {hint}',
  'keys.create': 'Create a key',
  'keys.create_intro': 'A new key of this account, shown once on the next page.',
  'keys.created_title': 'Your new API key',
  'keys.created_once':
    'Copy it now: it is shown this once and stored nowhere in plain. Whoever holds it acts for this account.',
  'keys.created_label': 'The new key',
  'keys.back': 'Back to the API keys',
  'keys.confirm_title': 'Revoke this key?',
  'keys.confirm_intro':
    'Every request with the key ending in {hint} is refused from now on, and its waits end. This cannot be undone.',
  'keys.confirm': 'Revoke the key',
  'keys.cancel': 'Keep it',
  'keys.revoked_done': 'The key ending in {hint} is revoked.',
} as const
