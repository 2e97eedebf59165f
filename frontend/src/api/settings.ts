// The Settings facade (app.Settings): the effective settings, their defaults and overrides.

import * as Go from '../../wailsjs/go/app/Settings'
import { api, bind } from './door'

export const settings = {
  get: bind(Go.Get, () => ({ method: 'GET', path: `${api}/settings` })),
  /** Stores the given dotted keys; a refusal carries the message per key (ApiError.fields). */
  set: bind(Go.Set, (values) => ({ method: 'PUT', path: `${api}/settings`, body: { values } })),
  /** Puts the given keys back to their defaults. */
  reset: bind(Go.Reset, (keys) => ({ method: 'POST', path: `${api}/settings/reset`, body: { keys } })),
}
