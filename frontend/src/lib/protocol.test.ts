import { describe, expect, it } from 'vitest'
import { protocolLabel } from './protocol'

describe('protocolLabel', () => {
  it.each([
    ['a translated request names both sides', 'openai-chat', 'anthropic', 'openai-chat → anthropic'],
    ['the same protocol on both sides is named once', 'anthropic', 'anthropic', 'anthropic'],
    ['the openai kind speaks openai-chat', 'openai-chat', 'openai', 'openai-chat'],
    ['responses to chat is a translation', 'openai-responses', 'openai', 'openai-responses → openai-chat'],
    ['no attempt names the client side', 'gemini', '', 'gemini'],
    ['a row from before protocols were kept', '', '', '–'],
  ])('%s', (_, client, upstream, want) => {
    expect(protocolLabel(client, upstream)).toBe(want)
  })
})
