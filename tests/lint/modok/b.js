// b.js — imports nothing
export const b = () => 1;
