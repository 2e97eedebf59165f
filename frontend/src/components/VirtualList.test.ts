import { describe, expect, it } from 'vitest'
import { createApp, h, nextTick } from 'vue'
import VirtualList from './VirtualList.vue'

describe('VirtualList', () => {
  it('renders only the rows in view, however many there are', async () => {
    const items = Array.from({ length: 10_000 }, (_, i) => ({ id: `r${i}` }))
    const el = document.createElement('div')
    document.body.appendChild(el)
    const app = createApp({
      render: () =>
        h(
          VirtualList,
          { items, rowHeight: 40, itemKey: (x: unknown) => (x as { id: string }).id, style: 'height: 400px' },
          { default: ({ item }: { item: { id: string } }) => h('span', { class: 'cell' }, item.id) },
        ),
    })
    app.mount(el)
    await nextTick()
    const rows = el.querySelectorAll('.cell')
    expect(rows.length).toBeGreaterThan(5)
    expect(rows.length).toBeLessThan(60)
    expect(rows[0]?.textContent).toBe('r0')
    const spacer = el.querySelector<HTMLElement>('.vlist-spacer')
    expect(spacer?.style.height).toBe(`${10_000 * 40}px`)

    // Scrolled to the middle: the rows there, not the first ones.
    const scroller = el.querySelector<HTMLElement>('.vlist') as HTMLElement
    scroller.scrollTop = 5000 * 40
    scroller.dispatchEvent(new Event('scroll'))
    await nextTick()
    const ids = [...el.querySelectorAll('.cell')].map((c) => c.textContent)
    expect(ids).toContain('r5000')
    expect(ids).not.toContain('r0')
    app.unmount()
    el.remove()
  })
})
