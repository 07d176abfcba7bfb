/** Who is looking at a console page: the signed-in user of one request's session. */
export interface Viewer {
  userId: string
  email: string
  operator: boolean
  /** The one account a member sees; null for an operator, who sees every account. */
  accountId: string | null
  /** Bound to this session: every POST form carries it as the hidden field `csrf`. */
  csrf: string
}
