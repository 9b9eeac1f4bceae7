// oidc-provider ships no types; the OIDC test uses only its constructor and callback().
declare module 'oidc-provider';
