// The Updates facade (app.Updates): self-update's state, "check now", "restart to finish".

import * as Go from '../../wailsjs/go/app/Updates'
import { UPDATE_STATUS } from '../events'
import { api, bind, currentDoor, type Unsubscribe } from './door'
import type { UpdateStatus } from './models'

export const updates = {
  status: bind(Go.Status, () => ({ method: 'GET', path: `${api}/update` })),
  check: bind(Go.Check, () => ({ method: 'POST', path: `${api}/update/check`, body: {} })),
  /** Only the window can restart itself: there is no HTTP route. */
  restart: bind(Go.Restart),
  canRestart: (): boolean => currentDoor().kind === 'wails',

  /** onStatus calls cb with every state the backend pushes. Returns the function that stops it. */
  onStatus(cb: (s: UpdateStatus) => void): Unsubscribe {
    return currentDoor().on(UPDATE_STATUS, (payload) => {
      if (payload !== null && typeof payload === 'object') cb(payload as UpdateStatus)
    })
  },
}
