// The access token of this tab: kept in sessionStorage (gone when the tab closes), sent as
// `Authorization: Bearer` on requests and as `?access_token=` on live streams.
import { h, replace } from './dom.js'

const KEY = 'session-store.token'

export const getToken = () => sessionStorage.getItem(KEY) ?? ''

export function setToken (token) {
  if (token === '') sessionStorage.removeItem(KEY)
  else sessionStorage.setItem(KEY, token)
}

/**
 * Shows the token form in `container` instead of the page. `reason` says why (a 401's detail,
 * or nothing when the reader opened it); `done` runs after Save or Forget.
 */
export function showTokenPrompt (container, reason, done) {
  const input = h('input', { id: 'token-input', type: 'password', autocomplete: 'off', spellcheck: 'false', value: getToken() })
  const form = h('form', {
    class: 'token-form',
    onSubmit: (event) => {
      event.preventDefault()
      setToken(input.value.trim())
      done()
    },
  },
  h('label', { for: 'token-input' }, 'Access token'),
  input,
  h('div', { class: 'actions' },
    h('button', { type: 'submit', class: 'primary' }, 'Save and retry'),
    h('button', { type: 'button', onClick: () => { setToken(''); done() } }, 'Forget token')))
  replace(container, h('section', { class: 'prompt', 'aria-labelledby': 'token-title' },
    h('h1', { id: 'token-title' }, reason === undefined ? 'Access token' : 'This server needs an access token'),
    reason === undefined ? null : h('p', { class: 'reason', role: 'alert' }, reason),
    h('p', {}, 'Paste a token with the read scope (the write scope also lets you move a session\u2019s leaf). ' +
      'It is kept in this tab only and sent to this server only.'),
    form))
  input.focus()
}
