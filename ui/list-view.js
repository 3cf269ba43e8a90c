// The session list: every session of the caller's tenant, newest change first, kept current by
// GET /v1/events (created, updated, deleted), filtered by project (cwd); above it, what the
// tenant stores against its quotas (GET /v1/usage), counted again at most every few seconds
// while sessions change. Text in the search box searches the content of every session
// (GET /v1/search): the hits replace the list, each with its snippet, the matches marked, and
// a link that opens the session at that entry.
import { api, withQuery } from './api.js'
import { ago, h, int, perFrame, plain, replace } from './dom.js'
import { LiveStream } from './live.js'

const SEARCH_DELAY_MS = 250
const HITS = 50

/** A snippet's text with each match (between « and ») in a <mark>. */
export function marked (snippet) {
  return snippet.split(/(«[^«»]*»)/).filter((part) => part !== '').map((part) =>
    part.startsWith('«') && part.endsWith('»') ? h('mark', {}, part.slice(1, -1)) : part)
}

const PAGE = 1000
const MAX_PAGES = 20
const SHOWN = 500 // rows rendered at most; the filters narrow the rest
const USAGE_EVERY_MS = 3000

/** Bytes as people read them: `12.3 MB`. */
function bytes (n) {
  const units = ['bytes', 'KB', 'MB', 'GB', 'TB']
  let i = 0
  while (n >= 1000 && i < units.length - 1) { n /= 1000; i++ }
  return `${i === 0 ? int(n) : n.toFixed(1)} ${units[i]}`
}

/** `used` and, with a quota, `of <limit> (<percent>)`. */
const against = (used, limit, show) => limit === null ? show(used) : `${show(used)} of ${show(limit)} (${Math.min(100, Math.round(used / limit * 100))} %)`

export class ListView {
  constructor (main, onUnauthorized) {
    Object.assign(this, { main, onUnauthorized })
    this.sessions = new Map()
    this.renderSoon = perFrame(() => this.#render())
    this.cwd = h('select', { id: 'cwd-filter', onChange: () => { this.renderSoon(); this.#searchSoon() } }, h('option', { value: '' }, 'All projects'))
    this.text = h('input', { id: 'text-filter', type: 'search', placeholder: 'Words, "phrases", -excluded, prefix*', onInput: () => this.#searchSoon() })
    this.summary = h('p', { class: 'summary', 'aria-live': 'polite' })
    this.usage = h('p', { class: 'usage', id: 'usage' })
    this.list = h('ul', { class: 'session-list' })
    this.hits = h('ul', { class: 'session-list hit-list', hidden: true })
    this.asked = 0
    replace(main, h('section', { class: 'sessions' },
      h('header', { class: 'list-head' }, h('h1', {}, 'Sessions'),
        h('div', { class: 'filters' },
          h('span', { class: 'filter' }, h('label', { for: 'cwd-filter' }, 'Project'), this.cwd),
          h('span', { class: 'filter' }, h('label', { for: 'text-filter' }, 'Search'), this.text))),
      this.usage, this.summary, this.list, this.hits))
    void this.#start()
  }

  async #start () {
    if (!await this.#load()) return
    const upsert = (info) => { this.sessions.set(info.id, info); this.renderSoon(); this.#usageSoon() }
    this.stream = new LiveStream('/v1/events', {}, {
      'session-created': upsert,
      'session-updated': upsert,
      'session-deleted': (info) => { this.sessions.delete(info.id); this.renderSoon(); this.#usageSoon() },
      reset: () => { void this.#load() },
    }, {
      probe: () => api('/v1/sessions?limit=1'),
      onRefused: (err) => this.#failed(err),
      // Events missed while disconnected are not replayed by every server: reload the list.
      onOpen: () => { if (this.opened === true) void this.#load(); this.opened = true },
    })
  }

  async #load () {
    const sessions = new Map()
    try {
      let cursor
      for (let pages = 0; pages < MAX_PAGES; pages++) {
        const page = await api(withQuery('/v1/sessions', { includeEmpty: true, limit: PAGE, cursor }))
        for (const info of page.sessions) sessions.set(info.id, info)
        cursor = page.nextCursor
        if (cursor === null || cursor === undefined) break
      }
    } catch (err) {
      this.#failed(err)
      return false
    }
    this.sessions = sessions
    this.#render()
    void this.#usage()
    this.main.dataset.ready = 'true'
    return true
  }

  /** Counts the usage again once the changes of the next few seconds are in. */
  #usageSoon () {
    if (this.usageTimer !== undefined) return
    this.usageTimer = setTimeout(() => { this.usageTimer = undefined; void this.#usage() }, USAGE_EVERY_MS)
  }

  async #usage () {
    let u
    try {
      u = await api('/v1/usage')
    } catch {
      replace(this.usage)
      return
    }
    replace(this.usage, h('span', { class: 'usage-label' }, 'Storage'),
      h('span', { class: 'usage-bytes' }, against(u.bytes, u.quota.bytes, bytes)),
      h('span', { class: 'usage-sessions' }, `${against(u.sessions, u.quota.sessions, int)} ${u.sessions === 1 ? 'session' : 'sessions'}`),
      h('span', { class: 'usage-blobs' }, `${int(u.blobs)} ${u.blobs === 1 ? 'blob' : 'blobs'} (${bytes(u.blobBytes)})`),
      u.retention.days === null ? null : h('span', { class: 'usage-retention' }, `kept ${int(u.retention.days)} days after their last change`))
    this.usage.dataset.full = String((u.quota.bytes !== null && u.bytes >= u.quota.bytes) || (u.quota.sessions !== null && u.sessions >= u.quota.sessions))
  }

  #failed (err) {
    if (err.status === 401) this.onUnauthorized(err.message)
    else replace(this.summary, `The sessions could not be listed: ${err.message}`)
  }

  #searchSoon () {
    clearTimeout(this.searchTimer)
    this.searchTimer = setTimeout(() => { void this.#search() }, SEARCH_DELAY_MS)
  }

  /** Searches the sessions' content for the box's text; an empty box shows the list again. */
  async #search () {
    const q = this.text.value.trim()
    const asked = ++this.asked
    this.list.hidden = q !== ''
    this.hits.hidden = q === ''
    if (q === '') {
      replace(this.hits)
      return this.#render()
    }
    let found
    try {
      found = await api(withQuery('/v1/search', { q, cwd: this.cwd.value === '' ? undefined : this.cwd.value, limit: HITS }))
    } catch (err) {
      if (asked !== this.asked) return
      if (err.status === 401) return this.onUnauthorized(err.message)
      replace(this.hits)
      replace(this.summary, `No search: ${err.message}`)
      return
    }
    if (asked !== this.asked) return // a newer search is on its way
    replace(this.summary, `${int(found.hits.length)}${found.nextCursor === null ? '' : '+'} matches`)
    replace(this.hits, found.hits.map((hit) => h('li', { dataset: { id: hit.sessionId, entry: hit.entryId ?? '' } },
      h('a', { href: `/ui/sessions/${encodeURIComponent(hit.sessionId)}${hit.entryId === null ? '' : `?entry=${encodeURIComponent(hit.entryId)}`}`, dataset: { nav: '' } },
        h('span', { class: 'title' }, hit.title ?? hit.sessionId),
        h('span', { class: 'snippet' }, marked(hit.snippet)),
        h('span', { class: 'info' },
          h('span', { class: 'kind' }, hit.role ?? hit.type),
          h('span', { class: 'cwd' }, hit.cwd),
          h('time', { datetime: hit.timestamp, title: hit.timestamp }, ago(hit.timestamp)))))))
  }

  #render () {
    if (this.text.value.trim() !== '' && !this.hits.hidden) return
    const cwds = [...new Set([...this.sessions.values()].map((s) => s.cwd))].sort()
    const chosen = this.cwd.value
    replace(this.cwd, h('option', { value: '' }, 'All projects'), cwds.map((cwd) => h('option', { value: cwd, selected: cwd === chosen }, cwd)))
    const shown = [...this.sessions.values()]
      .filter((s) => chosen === '' || s.cwd === chosen)
      .sort((a, b) => (Date.parse(b.modified) || 0) - (Date.parse(a.modified) || 0))
    replace(this.summary, `${int(shown.length)} of ${int(this.sessions.size)} sessions`,
      shown.length > SHOWN ? ` (the newest ${SHOWN} are listed; narrow the filters for the rest)` : '')
    replace(this.list, shown.slice(0, SHOWN).map((s) => h('li', { dataset: { id: s.id } },
      h('a', { href: `/ui/sessions/${encodeURIComponent(s.id)}`, dataset: { nav: '' } },
        h('span', { class: 'title' }, s.title || plain(s.firstMessage ?? '') || s.id),
        s.title && s.firstMessage ? h('span', { class: 'first' }, plain(s.firstMessage)) : null,
        h('span', { class: 'info' },
          h('span', { class: 'cwd' }, s.cwd),
          h('time', { datetime: s.modified, title: s.modified }, ago(s.modified)),
          h('span', { class: 'counts' }, `${int(s.entryCount)} entries · ${int(s.messageCount)} messages`))))))
  }

  destroy () {
    clearTimeout(this.searchTimer)
    this.stream?.close()
    clearTimeout(this.usageTimer)
  }
}
