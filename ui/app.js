// The dashboard's entry point: routes /ui/ (the session list) and /ui/sessions/{id} (one
// session) inside the page, and shows the token prompt when the server answers 401.
import { ListView } from './list-view.js'
import { showLiveState } from './live.js'
import { notice, SessionView } from './session-view.js'
import { showTokenPrompt } from './token.js'

const main = document.getElementById('main')
let view

function unauthorized (detail) {
  view?.destroy()
  view = undefined
  showLiveState('offline')
  delete main.dataset.ready
  showTokenPrompt(main, detail, route)
}

function route () {
  view?.destroy()
  notice('')
  delete main.dataset.ready
  showLiveState('idle')
  const match = /^\/ui\/sessions\/([^/]+)\/?$/.exec(location.pathname)
  view = match === null ? new ListView(main, unauthorized) : new SessionView(main, decodeURIComponent(match[1]), unauthorized)
  document.title = match === null ? 'Sessions · session-store' : `${decodeURIComponent(match[1])} · session-store`
}

// Links marked data-nav change the view without reloading the page.
document.addEventListener('click', (event) => {
  const link = event.target.closest?.('a[data-nav]')
  if (link === null || link === undefined || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return
  event.preventDefault()
  history.pushState(null, '', link.href)
  route()
  main.focus()
})
window.addEventListener('popstate', route)
document.getElementById('token-button').addEventListener('click', () => {
  view?.destroy()
  view = undefined
  showTokenPrompt(main, undefined, route)
})
route()
