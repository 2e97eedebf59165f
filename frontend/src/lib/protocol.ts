// The protocol column: what the client spoke and what went upstream (store.Exchange's
// clientProtocol and upstreamProtocol).

/**
 * The upstream side is an account kind (store/accounts.go) and the client side a wire format
 * (proxy/exchange.go): the kind "openai" speaks the format "openai-chat", so both sides are
 * named as the client side names them before they are compared.
 */
function asWireFormat(kind: string): string {
  return kind === 'openai' ? 'openai-chat' : kind
}

/**
 * protocolLabel is "openai-chat → anthropic" when a request was translated, one name when it
 * went out as it came (or made no attempt), '–' for rows recorded before protocols were kept.
 */
export function protocolLabel(clientProtocol: string | undefined, upstreamProtocol: string | undefined): string {
  const client = clientProtocol ?? ''
  const upstream = asWireFormat(upstreamProtocol ?? '')
  if (!client && !upstream) return '–'
  if (!upstream || client === upstream) return client
  if (!client) return upstream
  return `${client} → ${upstream}`
}
