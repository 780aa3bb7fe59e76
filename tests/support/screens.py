"""A WebArena screen (the local shop's My Orders page, as the env renders its accessibility tree)
for tests that read element lines and signatures without a browser."""

MY_ORDERS = """Tab 0 (current): My Orders

URL: http://shop/orders

[4] RootWebArea 'My Orders' focused: True
\t[263] cell '000000175'
\t[264] cell '11/28/22'
\t\t[268] link 'View Order'
\t[270] cell '000000174'
\t[271] cell '11/14/22'
\t\t[275] link 'View Order'
\t[60] link "Women's Lightweight Running Shoes"
"""
