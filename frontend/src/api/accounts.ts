// The Accounts facade (app.Accounts): upstream accounts, their live state and key tests.

import * as Go from '../../wailsjs/go/app/Accounts'
import { api, bind, seg } from './door'

export const accounts = {
  list: bind(Go.List, () => ({ method: 'GET', path: `${api}/accounts` })),
  add: bind(Go.Add, (input) => ({ method: 'POST', path: `${api}/accounts`, body: input })),
  update: bind(Go.Update, (id, input) => ({ method: 'PUT', path: `${api}/accounts/${seg(id)}`, body: input })),
  setEnabled: bind(Go.SetEnabled, (id, on) => ({ method: 'POST', path: `${api}/accounts/${seg(id)}/enabled`, body: { enabled: on } })),
  delete: bind(Go.Delete, (id) => ({ method: 'DELETE', path: `${api}/accounts/${seg(id)}` })),
  /** Tests a stored account's key against its upstream. */
  test: bind(Go.Test, (id) => ({ method: 'POST', path: `${api}/accounts/${seg(id)}/test`, body: {} })),
  /** Tests the form's key (id 0: a new account; otherwise an empty key means the stored one). */
  testKey: bind(Go.TestKey, (id, input) => ({ method: 'POST', path: `${api}/accounts/test`, body: { ...input, id } })),
}
