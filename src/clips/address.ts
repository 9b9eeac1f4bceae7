/** The address rules moved to src/core/address.ts, shared by every outbound fetch; kept here for the clips' imports. */
export { isPublicAddress, parseV6 } from '../core/address.js';
